package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/webhook"
)

// TestTrigger: `payd trigger TYPE` makes the sandbox emit the event and
// prints it; an unknown type is the API's 400.
func TestTrigger(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	vars := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}
	code, out, errOut := runPayd(vars, "trigger", "payout.failed")
	var ev struct{ ID, Type string }
	if err := json.Unmarshal([]byte(out), &ev); code != 0 || err != nil || ev.Type != "payout.failed" || !strings.HasPrefix(ev.ID, "evt_") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if r := e.Get("/v1/events/" + ev.ID); r.Status != 200 {
		t.Fatalf("the triggered event is not stored: %d %s", r.Status, r.Body)
	}
	// A dispute event: a synthetic dispute of the dispute object's shape.
	code, out, errOut = runPayd(vars, "trigger", "dispute.created")
	var dev struct {
		Type string
		Data struct {
			ID     string         `json:"id"`
			Object map[string]any `json:"object"`
		}
	}
	if err := json.Unmarshal([]byte(out), &dev); code != 0 || err != nil || dev.Type != "dispute.created" ||
		!strings.HasPrefix(dev.Data.ID, "dp_") || dev.Data.Object["object"] != "dispute" || dev.Data.Object["status"] != "needs_response" {
		t.Fatalf("dispute.created: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runPayd(vars, "trigger", "nope.nope"); code != 1 || !strings.Contains(errOut, "400") {
		t.Fatalf("unknown type: exit %d %q", code, errOut)
	}
	if code, _, errOut := runPayd(map[string]string{"PAYD_URL": e.URL}, "trigger", "payout.failed"); code != 1 || !strings.Contains(errOut, "PAYD_API_KEY") {
		t.Fatalf("no key: exit %d %q", code, errOut)
	}
	if code, _, _ := runPayd(vars, "trigger"); code != 2 {
		t.Fatalf("no type: exit %d", code)
	}
}

// TestListenRetriesAFailedForward: a receiver that answers 503 twice gets
// the event a third time; one that never recovers is given up on after
// --retries, and the next event still arrives.
func TestListenRetriesAFailedForward(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	var mu sync.Mutex
	attempts := map[string]int{} // event type → attempts
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		typ := r.Header.Get(webhook.HeaderEventType)
		mu.Lock()
		attempts[typ]++
		n := attempts[typ]
		mu.Unlock()
		if typ == "payout.failed" || (typ == "payout.succeeded" && n <= 2) {
			w.WriteHeader(503)
			return
		}
	}))
	defer rcv.Close()
	out := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := &env{stdout: out, stderr: io.Discard, getenv: func(k string) string {
		return map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}[k]
	}}
	go func() {
		done <- runListen(ctx, env, []string{"--forward-to", rcv.URL, "--retries", "2", "--events", "payout.failed,payout.succeeded,payment_intent.created"})
	}()
	waitUntil(t, 10*time.Second, "listen to be ready", func() bool { return strings.Contains(out.String(), "Ready!") })
	for _, typ := range []string{"payout.succeeded", "payout.failed", "payment_intent.created"} {
		if r := e.Post("/v1/sandbox/webhooks/trigger", map[string]any{"event_type": typ}); r.Status != 201 {
			t.Fatalf("trigger: %d %s", r.Status, r.Body)
		}
	}
	waitUntil(t, 20*time.Second, "the last event", func() bool { mu.Lock(); defer mu.Unlock(); return attempts["payment_intent.created"] == 1 })
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if attempts["payout.succeeded"] != 3 || attempts["payout.failed"] != 3 {
		t.Fatalf("attempts %v, want 3 for each failing event (1 + --retries 2)", attempts)
	}
	if !strings.Contains(out.String(), "(retry 2 of 2)") || strings.Count(out.String(), "[503]") != 5 {
		t.Fatalf("output:\n%s", out.String())
	}
}
