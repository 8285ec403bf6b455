package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// gate is a TCP proxy in front of the test database that, until opened,
// accepts and closes every connection (as a host that is down).
type gate struct {
	addr string
	open atomic.Bool
}

func newGate(t *testing.T, target string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	g := &gate{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !g.open.Load() {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
	return g
}

// TestServeWaitsForAWritableDatabase: serve on a URL whose only host
// accepts no writes does not exit: it listens, answers /healthz 200, /readyz
// 503 and every request 503 database_unavailable with Retry-After, and
// starts serving the API once a database accepts writes. Two cases: a
// server that is read-only (what target_session_attrs=read-write finds on a
// standby) stopped by the test, and a host that is down until it comes up.
func TestServeWaitsForAWritableDatabase(t *testing.T) {
	t.Parallel()
	key := map[string]string{"PAYD_SECRETS_KEY": strings.Repeat("5a", 32), "PAYD_DEMO": "false"}
	base := storetest.URL(t, storetest.Postgres) // skips without PostgreSQL
	waiting := func(t *testing.T, addr string) {
		t.Helper()
		get := func(path string) (int, string, http.Header) {
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				resp, err := http.Get("http://" + addr + path)
				if err != nil {
					if time.Now().After(deadline) {
						t.Fatal(err)
					}
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(b), resp.Header
			}
		}
		if code, _, _ := get("/healthz"); code != 200 {
			t.Errorf("/healthz while waiting: %d", code)
		}
		if code, body, _ := get("/readyz"); code != 503 {
			t.Errorf("/readyz while waiting: %d %s", code, body)
		}
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/payment_intents", strings.NewReader(`{"amount":100,"currency":"DJF"}`))
		req.Header.Set("Authorization", "Bearer sk_test_x")
		req.Header.Set("Idempotency-Key", "k1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 503 || e.Error.Code != "database_unavailable" || resp.Header.Get("Retry-After") == "" {
			t.Errorf("a request while waiting: %d %q Retry-After %q; want 503 database_unavailable with Retry-After",
				resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After"))
		}
	}

	t.Run("only a read-only server, stopped", func(t *testing.T) {
		m := mainFor(t, base+"&target_session_attrs=read-write&options=-c%20default_transaction_read_only%3Don", key, nil)
		m.Config.Addr = testutil.FreeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		waiting(t, m.Config.Addr)
		select {
		case err := <-done:
			t.Fatalf("Run returned while no database accepts writes: %v", err)
		default:
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run after its context ended: %v, want context.Canceled", err)
		}
		m.Close()
	})

	t.Run("a host down, then up", func(t *testing.T) {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		g := newGate(t, u.Host)
		u.Host = g.addr
		m := mainFor(t, u.String()+"&connect_timeout=2", key, nil)
		m.Config.Addr = testutil.FreeAddr(t)
		done := make(chan error, 1)
		go func() { done <- m.Run(context.Background()) }()
		waiting(t, m.Config.Addr)
		g.open.Store(true)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run still waiting 30 s after the database came up")
		}
		defer m.Close()
		resp, err := http.Get("http://" + m.Config.Addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("/readyz once the database is up: %d", resp.StatusCode)
		}
	})
}
