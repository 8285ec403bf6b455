package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/webhook"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestListenForwardsSignedEvents runs `payd listen` against a running payd:
// the events of the chosen types reach a local receiver signed with the
// secret listen printed, and each is reported on one line.
func TestListenForwardsSignedEvents(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		var mu sync.Mutex
		var secret string
		var got []string // event types received and verified
		var bad []error
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			defer mu.Unlock()
			d, err := webhook.Verify(secret, r.Header, body)
			if err != nil {
				bad = append(bad, err)
				w.WriteHeader(400)
				return
			}
			got = append(got, d.EventType)
		}))
		defer rcv.Close()

		out := &syncBuf{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		env := &env{stdout: out, stderr: io.Discard, getenv: func(k string) string {
			return map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}[k]
		}}
		go func() {
			done <- runListen(ctx, env, []string{"--forward-to", rcv.URL + "/hooks", "--events", "payout.failed,payout.succeeded"})
		}()
		secretRE := regexp.MustCompile(`whsec_[0-9a-z]+`)
		waitUntil(t, 10*time.Second, "listen to be ready", func() bool { return strings.Contains(out.String(), "Ready!") })
		mu.Lock()
		secret = secretRE.FindString(out.String())
		mu.Unlock()
		if secret == "" {
			t.Fatalf("no secret printed: %q", out.String())
		}
		for _, typ := range []string{"payout.failed", "payment_intent.created", "payout.succeeded"} {
			if r := e.Post("/v1/sandbox/webhooks/trigger", map[string]any{"event_type": typ}); r.Status != 201 {
				t.Fatalf("trigger: %d %s", r.Status, r.Body)
			}
		}
		waitUntil(t, 10*time.Second, "two forwarded events", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
		time.Sleep(200 * time.Millisecond) // nothing else should come
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("listen returned %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(bad) > 0 || len(got) != 2 || got[0] != "payout.failed" || got[1] != "payout.succeeded" {
			t.Fatalf("received %v, verification errors %v", got, bad)
		}
		lines := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "--> POST "+rcv.URL+"/hooks [200]") {
				lines++
			}
		}
		if lines != 2 {
			t.Fatalf("want one line per delivery, got output:\n%s", out.String())
		}
	})
}

// TestListenRefusesBadSetup: no key, no URL, an unknown type.
func TestListenRefusesBadSetup(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	base := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}
	run := func(vars map[string]string, args ...string) error {
		env := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return runListen(ctx, env, args)
	}
	if err := run(base); err != errUsage {
		t.Fatalf("no --forward-to: %v", err)
	}
	if err := run(map[string]string{"PAYD_URL": e.URL}, "--forward-to", "http://localhost:1/x"); err == nil || !strings.Contains(err.Error(), "PAYD_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
	if err := run(base, "--forward-to", "http://localhost:1/x", "--events", "nope.nope"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("unknown type: %v", err)
	}
	bad := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": "sk_test_wrong"}
	if err := run(bad, "--forward-to", "http://localhost:1/x"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("bad key: %v", err)
	}
}
