package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/webhook"
)

// TestTrigger: `payd trigger TYPE` runs the type's flow (real objects, the
// event about them) or, for a type no flow makes or with --fixture, sends a
// synthetic fixture; an unknown type is the API's 400.
func TestTrigger(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	vars := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}
	for _, typ := range sortedFlows() {
		t.Run(typ, func(t *testing.T) {
			code, out, errOut := runPayd(vars, "trigger", typ)
			var ev struct {
				ID, Type string
				Data     struct {
					ID     string         `json:"id"`
					Object map[string]any `json:"object"`
				}
			}
			if err := json.Unmarshal([]byte(out), &ev); code != 0 || err != nil || ev.Type != typ || !strings.HasPrefix(ev.ID, "evt_") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			// The event is about a real object the flow made, not a fixture.
			if ev.Data.Object["metadata"] != nil {
				if md, _ := ev.Data.Object["metadata"].(map[string]any); md["sandbox_fixture"] != nil {
					t.Fatalf("%s: a fixture, not the flow's object: %v", typ, ev.Data.Object)
				}
			}
			if !strings.Contains(errOut, ev.Data.ID) {
				t.Fatalf("the flow's objects are not reported: stderr %q, event about %s", errOut, ev.Data.ID)
			}
			if r := e.Get("/v1/events?related_object_id=" + ev.Data.ID); r.Status != 200 || !strings.Contains(string(r.Body), ev.ID) {
				t.Fatalf("the event is not among the object's events: %d %s", r.Status, r.Body)
			}
		})
	}
	// No flow makes invoice.paid: a synthetic fixture of the invoice's shape.
	code, out, errOut := runPayd(vars, "trigger", "invoice.paid")
	var fev struct {
		Type string
		Data struct {
			ID     string         `json:"id"`
			Object map[string]any `json:"object"`
		}
	}
	if err := json.Unmarshal([]byte(out), &fev); code != 0 || err != nil || fev.Type != "invoice.paid" || !strings.HasPrefix(fev.Data.ID, "in_") ||
		!strings.Contains(errOut, "fixture") {
		t.Fatalf("invoice.paid: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// --fixture sends a fixture even where a flow exists.
	code, out, errOut = runPayd(vars, "trigger", "--fixture", "dispute.created")
	if err := json.Unmarshal([]byte(out), &fev); code != 0 || err != nil || fev.Type != "dispute.created" ||
		!strings.HasPrefix(fev.Data.ID, "dp_") || fev.Data.Object["object"] != "dispute" || fev.Data.Object["status"] != "needs_response" {
		t.Fatalf("dispute.created fixture: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := runPayd(vars, "trigger", "--list"); code != 0 || !strings.Contains(out, "refund.succeeded") {
		t.Fatalf("--list: exit %d %q", code, out)
	}
	if code, _, errOut := runPayd(vars, "trigger", "nope.nope"); code != 1 || !strings.Contains(errOut, "400") {
		t.Fatalf("unknown type: exit %d %q", code, errOut)
	}
	if code, _, errOut := runPayd(map[string]string{"PAYD_URL": e.URL}, "trigger", "payout.failed"); code != 1 || !strings.Contains(errOut, "PAYD_API_KEY") {
		t.Fatalf("no key: exit %d %q", code, errOut)
	}
	// A live key is refused before any flow runs, whatever its prefix says.
	live := e.LiveKey(t, "bank_a")
	if code, _, errOut := runPayd(map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": live}, "trigger", "payment_intent.succeeded"); code != 1 || !strings.Contains(errOut, "live one") {
		t.Fatalf("live key: exit %d %q", code, errOut)
	}
	if code, _, _ := runPayd(vars, "trigger"); code != 2 {
		t.Fatalf("no type: exit %d", code)
	}
}

func sortedFlows() []string {
	var out []string
	for typ := range flows {
		out = append(out, typ)
	}
	sort.Strings(out)
	return out
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
