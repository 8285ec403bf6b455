package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/idempotency"
)

// Bulk uploads (up to 10 MB) are never held in memory whole. An upload route
// spools its body to a private temporary file while hashing it for the
// idempotency check, and its handler parses it from there as a stream; each
// run of the request (an idempotent request may run again) reads the file
// afresh. Large uploads also take a slot (a few per key, a few per merchant
// whatever its number of keys, a bounded number per process), so neither
// one key nor many keys of one merchant can make the process parse dozens
// at once.

// Upload marks a route that takes bulk uploads: its body is spooled to disk
// (see BodyReader) and large bodies take a per-key upload slot.
func Upload() RouteOption { return func(r *route) { r.upload = true } }

func errTooManyUploads() error {
	return &errs.Error{Kind: errs.KindRateLimited, Code: "too_many_uploads",
		Message: "too many large uploads in progress (at most " + strconv.Itoa(httpx.MaxUploadsPerKey) + " per key and " + strconv.Itoa(httpx.MaxUploadsPerMerchant) + " per merchant at once); retry when one has finished",
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
