package client

import (
	"bytes"
	"encoding/json"
)

// Nullable is an optional request field that may also be sent as null (to
// clear a value, such as the approval threshold). The zero value is not
// sent at all.
type Nullable[T any] struct {
	value *T
	set   bool
}

// Value returns a Nullable that sends v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: &v, set: true} }

// Null returns a Nullable that sends null.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true} }

// IsZero reports whether the field is unset (and so omitted).
func (n Nullable[T]) IsZero() bool { return !n.set }

// Get returns the value and whether it is non-null.
func (n Nullable[T]) Get() (T, bool) {
	if n.value == nil {
		var zero T
		return zero, false
	}
	return *n.value, true
}

// MarshalJSON encodes the value or null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*n.value)
}

// UnmarshalJSON decodes a value or null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		n.value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	n.value = &v
	return nil
}
