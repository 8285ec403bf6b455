package dukpt

import (
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
)

// KeySize is the length in bytes of every key this package handles: a
// double-length TDES key or an AES-128 key.
const KeySize = 16

// redacted is what a Key shows wherever it is printed, logged or marshalled.
const redacted = "dukpt.Key(redacted)"

// Key is secret key material (a BDK, an initial key, a transaction key or a
// working key) that never reveals its bytes through fmt, slog or encoding/json.
//
// The bytes sit behind a function: fmt prints a Key held in another struct's
// unexported field by reflection, without its Format method, and follows
// pointers there (under %s, for one), but never calls a function. Keys are
// immutable; compare them with Equal.
type Key struct {
	m func() *[KeySize]byte
}

// NewKey copies 16 bytes of key material into a Key.
func NewKey(b []byte) (Key, error) {
	if len(b) != KeySize {
		return Key{}, fmt.Errorf("%w: want %d bytes, got %d", ErrInvalidKey, KeySize, len(b))
	}
	var m [KeySize]byte
	copy(m[:], b)
	return keyOf(m), nil
}

// ParseKey reads a key written as 32 hex digits; the error never repeats the input.
func ParseKey(s string) (Key, error) {
	if len(s) != 2*KeySize {
		return Key{}, fmt.Errorf("%w: want %d hex digits, got %d", ErrInvalidKey, 2*KeySize, len(s))
	}
	var m [KeySize]byte
	if _, err := hex.Decode(m[:], []byte(s)); err != nil {
		return Key{}, fmt.Errorf("%w: not hex", ErrInvalidKey)
	}
	return keyOf(m), nil
}

func keyOf(b [KeySize]byte) Key { return Key{m: func() *[KeySize]byte { return &b }} }

// raw returns the key material; callers check IsZero first.
func (k Key) raw() [KeySize]byte { return *k.m() }

// Bytes returns a copy of the key material, or nil for the zero Key.
func (k Key) Bytes() []byte {
	if k.m == nil {
		return nil
	}
	b := *k.m()
	return b[:]
}

// IsZero reports whether the key was never set.
func (k Key) IsZero() bool { return k.m == nil }

// Equal reports in constant time whether two keys hold the same material.
func (k Key) Equal(o Key) bool {
	if k.m == nil || o.m == nil {
		return k.m == nil && o.m == nil
	}
	return subtle.ConstantTimeCompare(k.m()[:], o.m()[:]) == 1
}

// String returns a fixed placeholder, never the key.
func (k Key) String() string { return redacted }

// GoString returns a fixed placeholder, never the key.
func (k Key) GoString() string { return redacted }

// Format prints a fixed placeholder for every verb, so %x or %+v cannot leak the key.
func (k Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue logs a fixed placeholder, never the key.
func (k Key) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON encodes a fixed placeholder, never the key.
func (k Key) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText encodes a fixed placeholder, never the key.
func (k Key) MarshalText() ([]byte, error) { return []byte(redacted), nil }
