package ids

import (
	"encoding/binary"
	"strings"
	"time"
)

// Parse reverses At: for an id with this prefix and 26 characters of
// Crockford base32 it returns the millisecond the id names and the low 64
// bits of its random part. ok is false for anything that is not such an id.
// Ids whose low bits carry meaning (At's seq) are read back with it.
func Parse(prefix, id string) (t time.Time, seq uint64, ok bool) {
	s, found := strings.CutPrefix(id, prefix)
	if !found || len(s) != 26 {
		return time.Time{}, 0, false
	}
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		v := strings.IndexByte(alphabet, s[i])
		if v < 0 {
			return time.Time{}, 0, false
		}
		if i == 0 && v > 7 { // 26 characters carry 130 bits; the top two are zero
			return time.Time{}, 0, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], hi)
	binary.BigEndian.PutUint64(b[8:16], lo)
	ms := uint64(binary.BigEndian.Uint16(b[0:2]))<<32 | uint64(binary.BigEndian.Uint32(b[2:6]))
	return time.UnixMilli(int64(ms)).UTC(), lo, true
}
