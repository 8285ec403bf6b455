package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestHealthcheck: `payd healthcheck` exits 0 against a running payd's
// /readyz (on each engine), and 1 when the answer is not 200 or nothing
// listens; the default URL comes from PAYD_URL or PAYD_ADDR.
func TestHealthcheck(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if code, out, errOut := runPayd(nil, "healthcheck", "--url", e.URL+"/readyz"); code != 0 || !strings.Contains(out, "ready") {
			t.Fatalf("ready payd: exit %d %q %q", code, out, errOut)
		}
		if code, _, errOut := runPayd(map[string]string{"PAYD_URL": e.URL + "/"}, "healthcheck"); code != 0 {
			t.Fatalf("PAYD_URL: exit %d %q", code, errOut)
		}
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(e.URL, "http://"))
		if code, _, errOut := runPayd(map[string]string{"PAYD_ADDR": "0.0.0.0:" + port}, "healthcheck"); code != 0 {
			t.Fatalf("PAYD_ADDR 0.0.0.0: exit %d %q", code, errOut)
		}
		if code, _, errOut := runPayd(map[string]string{"PAYD_ADDR": ":" + port}, "healthcheck"); code != 0 {
			t.Fatalf("PAYD_ADDR :port: exit %d %q", code, errOut)
		}
	})

	unready := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"status":"unavailable"}`, http.StatusServiceUnavailable)
	}))
	defer unready.Close()
	if code, _, errOut := runPayd(nil, "healthcheck", "--url", unready.URL+"/readyz"); code != 1 || !strings.Contains(errOut, "503") {
		t.Fatalf("a 503: exit %d %q", code, errOut)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if code, _, errOut := runPayd(map[string]string{"PAYD_ADDR": closed}, "healthcheck", "--timeout", "1s"); code != 1 || !strings.Contains(errOut, "not ready") {
		t.Fatalf("nothing listening: exit %d %q", code, errOut)
	}
	if code, _, _ := runPayd(nil, "healthcheck", "--timeout", "0s"); code != 2 {
		t.Fatalf("--timeout 0: exit %d", code)
	}
	for addr, want := range map[string]string{
		"":               "http://127.0.0.1:8080/readyz",
		"[::]:9000":      "http://127.0.0.1:9000/readyz",
		"10.0.0.5:8080":  "http://10.0.0.5:8080/readyz",
		"localhost:8081": "http://localhost:8081/readyz",
	} {
		if got := healthURL(&env{getenv: func(k string) string {
			if k == "PAYD_ADDR" {
				return addr
			}
			return ""
		}}); got != want {
			t.Errorf("PAYD_ADDR %q: %s, want %s", addr, got, want)
		}
	}
}
