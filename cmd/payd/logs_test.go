package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// TestLogsTail: `payd logs tail` prints the key's latest requests oldest
// first, one line each with method, status, path, latency and request id;
// --follow prints a new request once the log has it; bad flags are usage
// errors; no key is an error naming PAYD_API_KEY.
func TestLogsTail(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	first := e.Get("/v1/payouts/po_nope")
	second := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 5000})
	if err := e.Main.RequestLog().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK}
	code, out, errOut := runPayd(vars, "logs", "tail", "--limit", "2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out)
	}
	for i, want := range []struct {
		r      *apptest.Response
		method string
		status string
		path   string
	}{{first, "GET", "404", "/v1/payouts/po_nope"}, {second, "POST", "201", "/v1/sandbox/topups"}} {
		f := strings.Fields(lines[i])
		// date time method status path latency "ms" request_id key_id
		if len(f) != 9 || f[2] != want.method || f[3] != want.status || f[4] != want.path || f[6] != "ms" ||
			f[7] != want.r.Header.Get("Request-Id") || !strings.HasPrefix(f[8], "key_") {
			t.Errorf("line %d: %q, want %s %s %s %s", i, lines[i], want.method, want.status, want.path, want.r.Header.Get("Request-Id"))
		}
	}
	if code, out, _ := runPayd(vars, "logs", "tail", "--json", "--limit", "1"); code != 0 || !strings.Contains(out, `"path":"/v1/sandbox/topups"`) {
		t.Fatalf("--json: exit %d %q", code, out)
	}

	// --follow: a request made after the start shows up.
	buf := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := &env{stdout: buf, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	go func() { done <- runLogs(ctx, env, []string{"tail", "--follow", "--limit", "1", "--interval", "200ms"}) }()
	waitUntil(t, 10*time.Second, "the first line", func() bool { return strings.Contains(buf.String(), "/v1/sandbox/topups") })
	third := e.Get("/v1/refunds/re_nope")
	waitUntil(t, 15*time.Second, "the new request", func() bool { return strings.Contains(buf.String(), third.Header.Get("Request-Id")) })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("follow printed %d lines, want 2 (its own reads are not logged): %q", n, buf.String())
	}

	if code, _, _ := runPayd(vars, "logs", "tail", "--limit", "500"); code != 2 {
		t.Fatalf("--limit 500: exit %d, want 2", code)
	}
	if code, _, errOut := runPayd(map[string]string{"PAYD_URL": e.URL}, "logs", "tail"); code != 1 || !strings.Contains(errOut, "PAYD_API_KEY") {
		t.Fatalf("no key: exit %d %q", code, errOut)
	}
}
