package tlv

// Object is one BER-TLV data object.
//
// For a primitive tag, Value is the value. For a constructed tag, Children are
// the nested objects; Parse also sets Value to their raw encoding, and Encode
// writes Value only when Children is nil. Values from Parse alias its input.
type Object struct {
	Tag      Tag
	Value    []byte
	Children List
}

// List is a sequence of data objects, as found at one level of a TLV payload.
type List []Object

// Primitive returns a primitive object holding value.
func Primitive(tag Tag, value []byte) Object {
	return Object{Tag: tag, Value: value}
}

// Constructed returns a constructed object holding children.
func Constructed(tag Tag, children ...Object) Object {
	if children == nil {
		children = List{}
	}
	return Object{Tag: tag, Children: children}
}

// Find returns the first object with the tag, searching depth-first through
// constructed objects in the order they appear.
func (l List) Find(tag Tag) (Object, bool) {
	for _, o := range l {
		if o.Tag == tag {
			return o, true
		}
		if found, ok := o.Children.Find(tag); ok {
			return found, true
		}
	}
	return Object{}, false
}

// Count returns the number of objects in the list, nested ones included.
func (l List) Count() int {
	n := len(l)
	for _, o := range l {
		n += o.Children.Count()
	}
	return n
}
