package webhooks_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/webhooks"
)

type sseMessage struct {
	ID, Event string
	Data      eventJSON
}

// openStream opens GET /v1/events/stream and returns its messages.
func openStream(t *testing.T, e *apptest.Env, query, lastEventID string) (<-chan sseMessage, func()) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.URL+"/v1/events/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+e.SK)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseMessage, 100)
	ready := make(chan struct{})
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var m sseMessage
		first := true
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				if first {
					first = false
					close(ready)
				}
			case strings.HasPrefix(line, "id: "):
				m.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				m.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &m.Data)
			case line == "" && m.ID != "":
				ch <- m
				m = sseMessage{}
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not open")
	}
	return ch, func() { resp.Body.Close() }
}

func next(t *testing.T, ch <-chan sseMessage) sseMessage {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("stream closed")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no event on the stream")
	}
	return sseMessage{}
}

// TestEventStream: new events of the chosen types arrive as server-sent
// events; a reconnect with Last-Event-ID gets what happened in between.
func TestEventStream(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		before := trigger(t, e, e.SK, map[string]any{"event_type": "payout.created"})
		ch, closeStream := openStream(t, e, "?types=payout.created,payout.failed", "")
		a := trigger(t, e, e.SK, map[string]any{"event_type": "payout.created"})
		trigger(t, e, e.SK, map[string]any{"event_type": "invoice.paid"}) // filtered out
		b := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		m := next(t, ch)
		if m.ID != a.ID || m.Event != "payout.created" || m.Data.ID != a.ID || m.Data.Data.ID != a.Data.ID {
			t.Fatalf("first message %+v, want %s (not the earlier %s)", m, a.ID, before.ID)
		}
		if m := next(t, ch); m.ID != b.ID {
			t.Fatalf("second message %s, want %s", m.ID, b.ID)
		}
		closeStream()
		// While disconnected.
		c := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		ch, closeStream = openStream(t, e, "?types=payout.created,payout.failed", b.ID)
		defer closeStream()
		if m := next(t, ch); m.ID != c.ID {
			t.Fatalf("after resume %s, want %s", m.ID, c.ID)
		}
		// Refusals before the stream starts are ordinary errors.
		if r := e.Get("/v1/events/stream?types=nope"); r.Status != 400 || !strings.Contains(string(r.Body), "types") {
			t.Fatalf("unknown type: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events/stream", Key: e.SK, Headers: map[string]string{"Last-Event-ID": "evt_NOPE"}}); r.Status != 400 {
			t.Fatalf("unknown Last-Event-ID: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events/stream"}); r.Status != 401 {
			t.Fatalf("no key: %d", r.Status)
		}
	})
}

// TestEventStreamsCappedPerKey: a key holds at most MaxStreamsPerKey streams;
// one more answers 429 too_many_streams, and closing a stream frees its slot.
func TestEventStreamsCappedPerKey(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		var closers []func()
		defer func() {
			for _, c := range closers {
				c()
			}
		}()
		for i := 0; i < webhooks.MaxStreamsPerKey; i++ {
			_, c := openStream(t, e, "", "")
			closers = append(closers, c)
		}
		extra := func() (int, string) {
			req, _ := http.NewRequest("GET", e.URL+"/v1/events/stream", nil)
			req.Header.Set("Authorization", "Bearer "+e.SK)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				var body struct {
					Error struct{ Code string } `json:"error"`
				}
				json.NewDecoder(resp.Body).Decode(&body)
				return resp.StatusCode, body.Error.Code
			}
			return resp.StatusCode, ""
		}
		if status, code := extra(); status != http.StatusTooManyRequests || code != "too_many_streams" {
			t.Fatalf("stream beyond the cap: %d %q, want 429 too_many_streams", status, code)
		}
		// Closing one frees its slot (the server notices the closed
		// connection on its next write or poll, so wait for it).
		closers[0]()
		closers = closers[1:]
		deadline := time.Now().Add(20 * time.Second)
		for {
			if status, _ := extra(); status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a closed stream's slot was never released")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
