package tlv

import "fmt"

// Hard limits on what Parse accepts.
const (
	// MaxDepth is how deeply constructed objects may nest; top-level objects are at depth 1.
	MaxDepth = 8
	// MaxSize is the longest input, in bytes, padding included.
	MaxSize = 4096
	// MaxObjects is the most objects one input may hold, nested ones included.
	MaxObjects = 256
)

// Parse decodes a sequence of BER-TLV objects, recursing into constructed ones
// and skipping 0x00 and 0xFF padding before, between and after objects. The
// returned values alias data.
func Parse(data []byte) (List, error) {
	if len(data) > MaxSize {
		return nil, &SyntaxError{Offset: MaxSize, Err: ErrTooLarge,
			Detail: fmt.Sprintf("%d bytes, at most %d", len(data), MaxSize)}
	}
	p := parser{data: data}
	return p.list(0, len(data), 1)
}

type parser struct {
	data    []byte
	objects int
}

// list parses the objects in data[start:end], which sit at the given depth.
func (p *parser) list(start, end, depth int) (List, error) {
	var out List
	i := start
	for i < end {
		if b := p.data[i]; b == 0x00 || b == 0xff {
			i++ // padding
			continue
		}
		o, next, err := p.object(i, end, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
		i = next
	}
	return out, nil
}

// object parses the object starting at offset i and returns the offset after it.
func (p *parser) object(i, end, depth int) (Object, int, error) {
	start := i
	tag, i, err := p.tag(i, end)
	if err != nil {
		return Object{}, 0, err
	}
	if depth > MaxDepth {
		return Object{}, 0, &SyntaxError{Offset: start, Tag: tag, Err: ErrTooDeep,
			Detail: fmt.Sprintf("depth %d, at most %d", depth, MaxDepth)}
	}
	length, i, err := p.length(i, end, tag)
	if err != nil {
		return Object{}, 0, err
	}
	if length > end-i {
		return Object{}, 0, &SyntaxError{Offset: start, Tag: tag, Err: ErrTruncated,
			Detail: fmt.Sprintf("value needs %d bytes, %d left", length, end-i)}
	}
	p.objects++
	if p.objects > MaxObjects {
		return Object{}, 0, &SyntaxError{Offset: start, Tag: tag, Err: ErrTooManyObjects,
			Detail: fmt.Sprintf("at most %d", MaxObjects)}
	}
	o := Object{Tag: tag, Value: p.data[i : i+length : i+length]}
	if tag.Constructed() {
		children, err := p.list(i, i+length, depth+1)
		if err != nil {
			return Object{}, 0, err
		}
		if children == nil {
			children = List{}
		}
		o.Children = children
	}
	return o, i + length, nil
}

// tag reads a tag at offset i.
func (p *parser) tag(i, end int) (Tag, int, error) {
	start := i
	t := Tag(p.data[i])
	i++
	if t&0x1f != 0x1f {
		return t, i, nil
	}
	for {
		if i >= end {
			return 0, 0, &SyntaxError{Offset: start, Err: ErrTruncated, Detail: "tag runs past the end"}
		}
		if i-start >= maxTagBytes {
			return 0, 0, &SyntaxError{Offset: start, Err: ErrTagTooLong}
		}
		b := p.data[i]
		t = t<<8 | Tag(b)
		i++
		if b&0x80 == 0 {
			return t, i, nil
		}
	}
}

// length reads a length field at offset i.
func (p *parser) length(i, end int, tag Tag) (int, int, error) {
	if i >= end {
		return 0, 0, &SyntaxError{Offset: i, Tag: tag, Err: ErrTruncated, Detail: "length missing"}
	}
	b := p.data[i]
	i++
	switch {
	case b < 0x80:
		return int(b), i, nil
	case b == 0x80:
		return 0, 0, &SyntaxError{Offset: i - 1, Tag: tag, Err: ErrInvalidLength, Detail: "indefinite form"}
	case b == 0xff:
		return 0, 0, &SyntaxError{Offset: i - 1, Tag: tag, Err: ErrInvalidLength, Detail: "reserved form 0xFF"}
	}
	n := int(b & 0x7f)
	if n > 4 {
		return 0, 0, &SyntaxError{Offset: i - 1, Tag: tag, Err: ErrInvalidLength,
			Detail: fmt.Sprintf("%d length bytes, at most 4", n)}
	}
	if n > end-i {
		return 0, 0, &SyntaxError{Offset: i - 1, Tag: tag, Err: ErrTruncated, Detail: "length runs past the end"}
	}
	var length uint64
	for _, c := range p.data[i : i+n] {
		length = length<<8 | uint64(c)
	}
	if length > MaxSize {
		// The declared length is not echoed: its bytes could be card data.
		return 0, 0, &SyntaxError{Offset: i - 1, Tag: tag, Err: ErrTruncated,
			Detail: fmt.Sprintf("declared length over %d bytes", MaxSize)}
	}
	return int(length), i + n, nil
}
