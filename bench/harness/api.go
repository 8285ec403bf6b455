package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// API calls one payd's JSON API with one secret key.
type API struct {
	Base string       // the server's base URL, such as http://127.0.0.1:41234
	Key  string       // sent as the bearer token
	HTTP *http.Client // nil means http.DefaultClient
}

// Request is one API call.
type Request struct {
	Method         string
	Path           string // appended to API.Base
	Body           any    // nil: no body; []byte or string: sent as is; anything else: encoded as JSON
	ContentType    string // of the body; application/json when empty
	IdempotencyKey string // sent when not empty
	Want           int    // the expected status; 0 means 200
}

// With is a copy of a that sends through c (such as a loadgen.Call's client).
func (a API) With(c *http.Client) API {
	a.HTTP = c
	return a
}

// Do sends r and reads the response into out: the raw body when out is a
// *[]byte, nothing when out is nil, JSON otherwise. Any other status than
// r.Want is an error that quotes the start of the body.
func (a API) Do(r Request, out any) error {
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return err
		}
		body = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(r.Method, a.Base+r.Path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.Key)
	if body != nil {
		ct := r.ContentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if r.IdempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	}
	c := a.HTTP
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	want := r.Want
	if want == 0 {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %.300s", r.Method, r.Path, resp.StatusCode, b)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = b
		return nil
	default:
		return json.Unmarshal(b, out)
	}
}

// Get fetches path, expecting 200, into out.
func (a API) Get(path string, out any) error {
	return a.Do(Request{Method: "GET", Path: path}, out)
}

// Post sends body to path with a fresh Idempotency-Key, expecting want,
// into out.
func (a API) Post(path string, body any, want int, out any) error {
	return a.Do(Request{Method: "POST", Path: path, Body: body, IdempotencyKey: "bench-" + RandomHex(8), Want: want}, out)
}

// TopUp credits the key's merchant's test-mode balance through the sandbox.
func (a API) TopUp(currency string, amountMinor int64) error {
	return a.Post("/v1/sandbox/topups", map[string]any{"currency": currency, "amount_minor": amountMinor}, http.StatusCreated, nil)
}
