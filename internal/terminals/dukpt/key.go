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
type Key struct {
	b   [KeySize]byte
	set bool
}

// NewKey copies 16 bytes of key material into a Key.
func NewKey(b []byte) (Key, error) {
	if len(b) != KeySize {
		return Key{}, fmt.Errorf("%w: want %d bytes, got %d", ErrInvalidKey, KeySize, len(b))
	}
	var k Key
	copy(k.b[:], b)
	k.set = true
	return k, nil
}

// ParseKey reads a key written as 32 hex digits; the error never repeats the input.
func ParseKey(s string) (Key, error) {
	if len(s) != 2*KeySize {
		return Key{}, fmt.Errorf("%w: want %d hex digits, got %d", ErrInvalidKey, 2*KeySize, len(s))
	}
	var k Key
	if _, err := hex.Decode(k.b[:], []byte(s)); err != nil {
		return Key{}, fmt.Errorf("%w: not hex", ErrInvalidKey)
	}
	k.set = true
	return k, nil
}

func keyOf(b [KeySize]byte) Key { return Key{b: b, set: true} }

// Bytes returns a copy of the key material.
func (k Key) Bytes() []byte {
	b := k.b
	return b[:]
}

// IsZero reports whether the key was never set.
func (k Key) IsZero() bool { return !k.set }

// Equal reports in constant time whether two keys hold the same material.
func (k Key) Equal(o Key) bool {
	return k.set == o.set && subtle.ConstantTimeCompare(k.b[:], o.b[:]) == 1
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
