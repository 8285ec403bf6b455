package httpx

import (
	"net/http"
	"sync"
)

// MaxUploadsPerKey is how many large uploads one key may have in flight at
// once; another answers 429 too_many_uploads.
const MaxUploadsPerKey = 2

// MaxUploadsPerMerchant is how many large uploads all of one merchant's keys
// and portal users together may have in flight at once, whatever the number
// of keys; another answers 429 too_many_uploads.
const MaxUploadsPerMerchant = 4

// MaxUploadsPerProcess is how many large uploads the whole process (API and
// portal together, all merchants) parses at once; another answers 429
// too_many_uploads. With spooling to disk and streamed parsing, this bounds
// the memory large uploads can hold.
const MaxUploadsPerProcess = 8

// largeUpload is the body size past which an upload takes a slot (as does
// one of unknown length, chunked): the ordinary JSON limit (the API's
// DefaultMaxBody).
const largeUpload = 1 << 20

// UploadSlots counts the large uploads in flight per principal (an API key,
// or a portal user), per merchant and in total. An entry lives only while
// its principal (merchant) has one in flight, so the maps are bounded by the
// requests being served. One UploadSlots is shared by the API and the
// portal, so the total holds for the process.
type UploadSlots struct {
	mu          sync.Mutex
	max         int
	maxMerchant int
	maxTotal    int
	busy        map[string]int
	merchants   map[string]int
	total       int
}

// NewUploadSlots makes slots allowing each principal perKey large uploads at
// once, each merchant perMerchant and the whole set total.
func NewUploadSlots(perKey, perMerchant, total int) *UploadSlots {
	return &UploadSlots{max: perKey, maxMerchant: perMerchant, maxTotal: total,
		busy: map[string]int{}, merchants: map[string]int{}}
}

// NewDefaultUploadSlots makes slots with payd's limits: MaxUploadsPerKey,
// MaxUploadsPerMerchant and MaxUploadsPerProcess.
func NewDefaultUploadSlots() *UploadSlots {
	return NewUploadSlots(MaxUploadsPerKey, MaxUploadsPerMerchant, MaxUploadsPerProcess)
}

// Acquire takes one of principal's slots when r's body is large: over the
// ordinary JSON limit, or of unknown length (chunked). It reports false when all
// of principal's slots, all of merchant's or all of the process's are in
// use, having read nothing of the body; the caller then refuses r (see
// RefuseUpload). Otherwise the caller calls release once r is served; a
// small body takes no slot.
func (u *UploadSlots) Acquire(principal, merchant string, r *http.Request) (release func(), ok bool) {
	if r.ContentLength >= 0 && r.ContentLength <= largeUpload {
		return func() {}, true
	}
	if !u.take(principal, merchant) {
		return nil, false
	}
	var once sync.Once
	return func() { once.Do(func() { u.release(principal, merchant) }) }, true
}

// take reserves a slot for key and merchant, or reports false when any of
// the three limits is reached (then nothing is reserved).
func (u *UploadSlots) take(key, merchant string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy[key] >= u.max || u.merchants[merchant] >= u.maxMerchant || u.total >= u.maxTotal {
		return false
	}
	u.busy[key]++
	u.merchants[merchant]++
	u.total++
	return true
}

func (u *UploadSlots) release(key, merchant string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.busy[key]--; u.busy[key] <= 0 {
		delete(u.busy, key)
	}
	if u.merchants[merchant]--; u.merchants[merchant] <= 0 {
		delete(u.merchants, merchant)
	}
	u.total--
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
