package ids

import (
	"encoding/binary"
	"time"
)

// Floor returns the smallest id with this prefix that New could make at t
// (its random part all zeros): every id made at or after t sorts at or
// above it, every id made before t below it. Lists use it to turn a time
// bound into an id bound, so a newest-first scan by id starts where the
// time range does.
func Floor(prefix string, t time.Time) string { return At(prefix, t, 0) }

// At returns the id with this prefix for time t whose low 64 bits are seq
// (the rest of the random part zero). Seeders and tests use it to make ids of
// the service's shape for past times; the service itself uses New.
func At(prefix string, t time.Time, seq uint64) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	binary.BigEndian.PutUint64(b[8:16], seq)
	return prefix + encode(b)
}
