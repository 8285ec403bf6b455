package httpx

import (
	"net/http"
	"sync"
)

// MaxUploadsPerKey is how many large uploads one key may have in flight at
// once; another answers 429 too_many_uploads.
const MaxUploadsPerKey = 2

// largeUpload is the body size past which an upload takes a slot (as does
// one of unknown length, chunked): the ordinary JSON limit (the API's
// DefaultMaxBody).
const largeUpload = 1 << 20

// UploadSlots counts the large uploads in flight per principal (an API key,
// or a portal user). An entry lives only while its principal has one in
// flight, so the map is bounded by the requests being served.
type UploadSlots struct {
	mu   sync.Mutex
	max  int
	busy map[string]int
}

// NewUploadSlots makes slots allowing each principal max large uploads at
// once.
func NewUploadSlots(max int) *UploadSlots { return &UploadSlots{max: max, busy: map[string]int{}} }

// Acquire takes one of principal's slots when r's body is large: over the
// ordinary JSON limit, or of unknown length (chunked). It reports false when all
// of principal's slots are in use, having read nothing of the body; the
// caller then refuses r (see RefuseUpload). Otherwise the caller calls
// release once r is served; a small body takes no slot.
func (u *UploadSlots) Acquire(principal string, r *http.Request) (release func(), ok bool) {
	if r.ContentLength >= 0 && r.ContentLength <= largeUpload {
		return func() {}, true
	}
	if !u.take(principal) {
		return nil, false
	}
	return func() { u.release(principal) }, true
}

// take reserves a slot for key, or reports false when all of its slots are in use.
func (u *UploadSlots) take(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy[key] >= u.max {
		return false
	}
	u.busy[key]++
	return true
}

func (u *UploadSlots) release(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy[key]--; u.busy[key] <= 0 {
		delete(u.busy, key)
	}
}

// inFlight is the number of keys holding a slot (for tests).
func (u *UploadSlots) inFlight() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.busy)
}

// RefuseUpload prepares w for refusing an upload Acquire turned away: the
// connection closes after the answer, so the server does not read (up to
// 256 KiB of) the unread body to keep it open.
func RefuseUpload(w http.ResponseWriter) { w.Header().Set("Connection", "close") }
