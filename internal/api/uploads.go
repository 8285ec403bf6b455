package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"
)

// Bulk uploads (up to 10 MB) are never held in memory whole. An upload route
// spools its body to a private temporary file while hashing it for the
// idempotency check, and its handler parses it from there as a stream; each
// run of the request (an idempotent request may run again) reads the file
// afresh. Large uploads from one key also take one of a few slots, so one
// key cannot make the process parse dozens at once.

// MaxUploadsPerKey is how many large uploads one key may have in flight at
// once; another answers 429 too_many_uploads.
const MaxUploadsPerKey = 2

// largeUpload is the body size past which an upload takes a slot (as does
// one of unknown length, chunked): the ordinary JSON limit.
const largeUpload = DefaultMaxBody

// Upload marks a route that takes bulk uploads: its body is spooled to disk
// (see BodyReader) and large bodies take a per-key upload slot.
func Upload() RouteOption { return func(r *route) { r.upload = true } }

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

// Acquire takes one of principal's slots when r's body is large: over
// DefaultMaxBody, or of unknown length (chunked). It reports false when all
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

func errTooManyUploads() error {
	return &errs.Error{Kind: errs.KindRateLimited, Code: "too_many_uploads",
		Message: "this key already has " + strconv.Itoa(MaxUploadsPerKey) + " large uploads in progress; retry when one has finished",
		Extra:   map[string]any{"retry_after": "1"}}
}

// spooledBody is an upload's body in a temporary file.
type spooledBody struct {
	f    *os.File
	size int64
}

type spoolKey struct{}

// spool copies the (size-limited) body to a temporary file readable only by
// this process's user, hashing it on the way for the idempotency check. The
// caller closes it, which removes the file.
func spool(r *http.Request) (*spooledBody, string, error) {
	f, err := os.CreateTemp("", "payd-upload-*")
	if err != nil {
		return nil, "", errs.Internal(err)
	}
	os.Remove(f.Name()) // unlinked at once: gone with the descriptor, whatever happens
	h := idempotency.NewRequestHash(r.Method, r.URL.Path)
	n, err := io.Copy(io.MultiWriter(f, h), r.Body)
	if err != nil {
		f.Close()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, "", &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Message: "the request body is larger than this endpoint accepts"}
		}
		return nil, "", &errs.Error{Kind: errs.KindInvalid, Code: "body_unreadable", Message: "the request body could not be read"}
	}
	return &spooledBody{f: f, size: n}, idempotency.SumRequestHash(h), nil
}

func (s *spooledBody) Close() error { return s.f.Close() }

// BodyReader returns the request body as a stream: an upload's spooled
// file from its start, the body an idempotent request already read, or the
// body itself.
func BodyReader(r *http.Request) io.Reader {
	if s, ok := r.Context().Value(spoolKey{}).(*spooledBody); ok {
		return io.NewSectionReader(s.f, 0, s.size)
	}
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return bytes.NewReader(b)
	}
	return r.Body
}
