package dukpt

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strings"
)

const (
	tdesKSNLength   = 10
	tdesCounterBits = 21
	tdesMaxOneBits  = 10
	aesKSNLength    = 12
	aesCounterBits  = 32
	aesMaxOneBits   = 16
	maxKSNLength    = aesKSNLength
)

// KSN is a key serial number: the identity of the device's initial key plus the
// transaction counter, sent in clear with every encrypted payload.
//
// A TDES KSN is 10 bytes whose rightmost 21 bits are the counter; an AES-128 KSN
// is an 8-byte initial key ID followed by a 32-bit counter.
type KSN struct {
	alg Algorithm
	b   [maxKSNLength]byte
}

// ParseKSN reads a KSN written in hex for the given algorithm and checks that its
// counter is one an originating device can reach (counter 0 is the initial KSN).
func ParseKSN(alg Algorithm, s string) (KSN, error) {
	if !alg.valid() {
		return KSN{}, fmt.Errorf("%w: %d", ErrUnsupportedAlgorithm, alg)
	}
	n := alg.KSNLength()
	if len(s) != 2*n {
		return KSN{}, fmt.Errorf("%w: want %d hex digits for %s, got %d", ErrInvalidKSN, 2*n, alg, len(s))
	}
	var b [maxKSNLength]byte
	if _, err := hex.Decode(b[:n], []byte(s)); err != nil {
		return KSN{}, fmt.Errorf("%w: not hex", ErrInvalidKSN)
	}
	return newKSN(alg, b)
}

// NewKSN builds a KSN from its bytes, with the same checks as ParseKSN.
func NewKSN(alg Algorithm, b []byte) (KSN, error) {
	if !alg.valid() {
		return KSN{}, fmt.Errorf("%w: %d", ErrUnsupportedAlgorithm, alg)
	}
	if len(b) != alg.KSNLength() {
		return KSN{}, fmt.Errorf("%w: want %d bytes for %s, got %d", ErrInvalidKSN, alg.KSNLength(), alg, len(b))
	}
	var a [maxKSNLength]byte
	copy(a[:], b)
	return newKSN(alg, a)
}

func newKSN(alg Algorithm, b [maxKSNLength]byte) (KSN, error) {
	k := KSN{alg: alg, b: b}
	if ones := bits.OnesCount32(k.Counter()); ones > alg.maxOneBits() {
		return KSN{}, fmt.Errorf("%w: counter %#x has %d one-bits, a %s device skips counters with more than %d",
			ErrInvalidKSN, k.Counter(), ones, alg, alg.maxOneBits())
	}
	return k, nil
}

// Algorithm returns the DUKPT variant the KSN belongs to.
func (k KSN) Algorithm() Algorithm { return k.alg }

// IsZero reports whether the KSN was never set.
func (k KSN) IsZero() bool { return !k.alg.valid() }

// Bytes returns a copy of the KSN's bytes.
func (k KSN) Bytes() []byte {
	out := make([]byte, k.alg.KSNLength())
	copy(out, k.b[:])
	return out
}

// String returns the KSN in uppercase hex; a KSN is not secret.
func (k KSN) String() string {
	return strings.ToUpper(hex.EncodeToString(k.b[:k.alg.KSNLength()]))
}

// Counter returns the transaction counter: 21 bits for TDES, 32 bits for AES-128.
func (k KSN) Counter() uint32 {
	switch k.alg {
	case TDES:
		return uint32(k.b[7]&0x1f)<<16 | uint32(k.b[8])<<8 | uint32(k.b[9])
	case AES128:
		return binary.BigEndian.Uint32(k.b[8:12])
	default:
		return 0
	}
}

// IsInitial reports whether the counter is 0, as in the initial KSN loaded into a device.
func (k KSN) IsInitial() bool { return k.Counter() == 0 }

// InitialKeyID returns, in uppercase hex, the part of the KSN that names the
// device's initial key: the initial KSN (counter bits cleared, 20 digits) for
// TDES, the 8-byte initial key ID (16 digits) for AES-128.
func (k KSN) InitialKeyID() string {
	switch k.alg {
	case TDES:
		return k.Initial().String()
	case AES128:
		return strings.ToUpper(hex.EncodeToString(k.b[:8]))
	default:
		return ""
	}
}

// Initial returns the initial KSN: the same KSN with its counter set to 0.
func (k KSN) Initial() KSN {
	out := k
	out.setCounter(0)
	return out
}

// WithCounter returns the KSN with its counter replaced, checked like ParseKSN.
func (k KSN) WithCounter(counter uint32) (KSN, error) {
	if !k.alg.valid() {
		return KSN{}, fmt.Errorf("%w: zero KSN", ErrInvalidKSN)
	}
	if k.alg == TDES && counter>>tdesCounterBits != 0 {
		return KSN{}, fmt.Errorf("%w: counter %#x exceeds %d bits", ErrInvalidKSN, counter, tdesCounterBits)
	}
	out := k
	out.setCounter(counter)
	return newKSN(out.alg, out.b)
}

func (k *KSN) setCounter(c uint32) {
	switch k.alg {
	case TDES:
		k.b[7] = k.b[7]&^0x1f | byte(c>>16)&0x1f
		k.b[8] = byte(c >> 8)
		k.b[9] = byte(c)
	case AES128:
		binary.BigEndian.PutUint32(k.b[8:12], c)
	}
}

// checkTransaction reports whether k can name a transaction: set, and past the initial KSN.
func (k KSN) checkTransaction() error {
	if !k.alg.valid() {
		return fmt.Errorf("%w: zero KSN", ErrInvalidKSN)
	}
	if k.IsInitial() {
		return fmt.Errorf("%w: counter 0 is the initial KSN and names no transaction", ErrInvalidKSN)
	}
	return nil
}
