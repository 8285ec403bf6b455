package webhooks_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/webhook"
)

// received is one request a test receiver got.
type received struct {
	EventID   string
	EventType string
	Body      []byte
	At        time.Time
	Verified  error // nil when the signature checked out
	Answered  int   // the status the receiver answered (0: no answer)
}

// receiver is a webhook receiver test server that verifies every delivery
// with the published algorithm (package webhook). behave decides, per
// request (n counts from 1 per event id), how to answer.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	got    []received
	behave func(n int, eventID string) action
	notify chan struct{}
}

type action int

const (
	answer200 action = iota
	answer500
	answerLate // sleep 6 s, then 200
	hangUp     // close the connection without an answer
)

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{t: t, notify: make(chan struct{}, 1)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hooks" }

func (rc *receiver) setSecret(s string) {
	rc.mu.Lock()
	rc.secret = s
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	secret := rc.secret
	n := 1
	id := r.Header.Get(webhook.HeaderEventID)
	for _, g := range rc.got {
		if g.EventID == id {
			n++
		}
	}
	act := answer200
	if rc.behave != nil {
		act = rc.behave(n, id)
	}
	rec := received{EventID: id, EventType: r.Header.Get(webhook.HeaderEventType), Body: body, At: time.Now()}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		rec.Verified = errBadRequest
	} else {
		_, rec.Verified = webhook.Verify(secret, r.Header, body)
	}
	idx := len(rc.got)
	rc.got = append(rc.got, rec)
	rc.mu.Unlock()
	status := 0
	switch act {
	case answer500:
		status = 500
		w.WriteHeader(500)
		io.WriteString(w, `{"error":"receiver is failing on purpose"}`)
	case answerLate:
		time.Sleep(6 * time.Second)
		status = 200
		w.WriteHeader(200)
	case hangUp:
		hj, ok := w.(http.Hijacker)
		if !ok {
			rc.t.Error("cannot hijack")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
		}
	default:
		if rec.Verified != nil {
			status = 400
			w.WriteHeader(400)
		} else {
			status = 200
			w.WriteHeader(200)
		}
	}
	rc.mu.Lock()
	rc.got[idx].Answered = status
	rc.mu.Unlock()
	select {
	case rc.notify <- struct{}{}:
	default:
	}
}

type badRequest struct{}

func (badRequest) Error() string { return "not a POST with Content-Type application/json" }

var errBadRequest error = badRequest{}

// requests returns a copy of what was received.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// acked returns the event ids acknowledged with 2xx, with their counts.
func (rc *receiver) acked() map[string]int {
	out := map[string]int{}
	for _, g := range rc.requests() {
		if g.Answered >= 200 && g.Answered < 300 {
			out[g.EventID]++
		}
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes. The pause
// between polls starts at 5 ms and doubles up to 50 ms: most conditions are
// database queries, and waits of seconds (retry schedules, deliveries
// across restarts) polled every 10 ms were 9 % of the CPU of the package's
// two longest tests under -race; a condition that holds soon is still seen
// soon.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	pause := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
