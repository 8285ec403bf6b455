package tlv

import "fmt"

// Encode writes the objects in canonical form: no padding, and each length in
// the shortest form (short form below 128, else 0x81, 0x82, ...).
func Encode(objects List) ([]byte, error) {
	return appendList(nil, objects)
}

func appendList(dst []byte, objects List) ([]byte, error) {
	for _, o := range objects {
		var err error
		if dst, err = appendObject(dst, o); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func appendObject(dst []byte, o Object) ([]byte, error) {
	if !o.Tag.Valid() {
		return nil, fmt.Errorf("tlv: encode tag %s: %w", o.Tag, ErrInvalidTag)
	}
	value := o.Value
	if o.Children != nil {
		if !o.Tag.Constructed() {
			return nil, fmt.Errorf("tlv: encode tag %s: %w: primitive tag with children", o.Tag, ErrInvalidTag)
		}
		var err error
		if value, err = appendList(nil, o.Children); err != nil {
			return nil, err
		}
	}
	dst = append(dst, o.Tag.Bytes()...)
	dst = appendLength(dst, len(value))
	return append(dst, value...), nil
}

// appendLength writes a length in the shortest BER form.
func appendLength(dst []byte, n int) []byte {
	if n < 0x80 {
		return append(dst, byte(n))
	}
	var buf [8]byte
	i := len(buf)
	for v := uint64(n); v > 0; v >>= 8 {
		i--
		buf[i] = byte(v)
	}
	dst = append(dst, 0x80|byte(len(buf)-i))
	return append(dst, buf[i:]...)
}
