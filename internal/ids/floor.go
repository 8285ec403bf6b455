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
func Floor(prefix string, t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	return prefix + encode(b)
}
