// Package ids makes payd's object identifiers: a type prefix followed by 26
// characters of Crockford base32 that sort by creation time (48 bits of
// milliseconds, then 80 bits that are random for the first id of a
// millisecond and incremented for the next ones in this process).
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var (
	mu      sync.Mutex
	lastMS  uint64
	lastRnd [10]byte
)

// New returns prefix + a time-ordered unique suffix, e.g. New("pi_").
func New(prefix string) string {
	return newAt(prefix, time.Now())
}

func newAt(prefix string, t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	mu.Lock()
	if ms <= lastMS {
		// Same (or an earlier, after a clock step) millisecond: keep the order
		// by incrementing the random part of the previous id.
		ms = lastMS
		for i := len(lastRnd) - 1; i >= 0; i-- {
			lastRnd[i]++
			if lastRnd[i] != 0 {
				break
			}
		}
	} else {
		lastMS = ms
		if _, err := rand.Read(lastRnd[:]); err != nil {
			panic("ids: crypto/rand failed: " + err.Error())
		}
		lastRnd[0] &= 0x7f // leave room to increment without wrapping
	}
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	copy(b[6:], lastRnd[:])
	mu.Unlock()
	return prefix + encode(b)
}

// encode writes 128 bits as 26 Crockford base32 characters, most significant first.
func encode(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// Secret returns prefix + n random bytes in lowercase base32, for API keys,
// webhook secrets and page tokens.
func Secret(prefix string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("ids: crypto/rand failed: " + err.Error())
	}
	out := make([]byte, 0, len(prefix)+n*8/5+1)
	out = append(out, prefix...)
	var acc uint32
	bits := 0
	const lower = "0123456789abcdefghjkmnpqrstvwxyz"
	for _, c := range b {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out = append(out, lower[(acc>>uint(bits))&31])
		}
	}
	if bits > 0 {
		out = append(out, lower[(acc<<uint(5-bits))&31])
	}
	return string(out)
}
