package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/api"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// TestDatabaseRestartMidLoad (PostgreSQL): payd reaches its database through
// a proxy that plays a server restart in the middle of a load of keyed
// requests: every open connection is cut and, for 700 ms, new ones are
// refused. Requests whose runs fail then, on their first statement, their
// key's read, their unit's BEGIN or their COMMIT, pause and run again: every
// request answers 201, and every key has exactly one effect.
func TestDatabaseRestartMidLoad(t *testing.T) {
	p, db, ms, key, s := proxiedAPI(t, "Restarted")
	s.Handle("POST /v1/test/restart", func(w http.ResponseWriter, r *http.Request) error {
		if _, err := ms.Create(r.Context(), merchants.CreateParams{Name: "restart " + r.Header.Get("Idempotency-Key")}); err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusCreated, map[string]bool{"done": true})
		return nil
	})

	const clients, each = 8, 40
	var wg sync.WaitGroup
	failed := make(chan string, clients*each)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := fmt.Sprintf("restart-%d-%d", c, i)
				if w := postKeyed(s, key, "/v1/test/restart", k); w.Code != http.StatusCreated {
					failed <- fmt.Sprintf("%s: %d %s", k, w.Code, w.Body)
				}
			}
		}()
	}
	time.Sleep(30 * time.Millisecond)
	cut := p.restart(700 * time.Millisecond)
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	if cut == 0 {
		t.Error("the restart cut no connection: the load was over before it")
	}
	var n, keys int
	if err := db.QueryRow(context.Background(), "SELECT COUNT(*), COUNT(DISTINCT name) FROM merchants WHERE name LIKE 'restart %'").Scan(&n, &keys); err != nil {
		t.Fatal(err)
	}
	if n != clients*each || keys != clients*each {
		t.Errorf("%d effects for %d keys, want %d and %d", n, keys, clients*each, clients*each)
	}
	t.Logf("%d connections cut", cut)
}

// TestReadWhileDatabaseDown (PostgreSQL): a GET whose read finds the
// database down (connections cut, new ones refused) answers 503
// database_unavailable with Retry-After, not 500: it changed nothing, and a
// retry once the database is back answers.
func TestReadWhileDatabaseDown(t *testing.T) {
	p, db, _, key, s := proxiedAPI(t, "Read while down")
	s.Handle("GET /v1/test/read", func(w http.ResponseWriter, r *http.Request) error {
		var n int
		if err := db.QueryRow(r.Context(), "SELECT COUNT(*) FROM merchants").Scan(&n); err != nil {
			return err
		}
		api.WriteJSON(w, http.StatusOK, map[string]int{"merchants": n})
		return nil
	})
	get := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/v1/test/read", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	if w := get(); w.Code != http.StatusOK {
		t.Fatalf("before: %d %s", w.Code, w.Body)
	}
	p.down()
	w := get()
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"database_unavailable"`) || w.Header().Get("Retry-After") != "1" {
		t.Errorf("while down: %d %s (Retry-After %q), want 503 database_unavailable with Retry-After: 1", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	p.up()
	if w := get(); w.Code != http.StatusOK {
		t.Errorf("once up again: %d %s", w.Code, w.Body)
	}
}

// proxiedAPI is an API server on a fresh PostgreSQL database reached
// through a restartProxy, with a merchant named name and its secret key.
func proxiedAPI(t *testing.T, name string) (*restartProxy, *store.DB, *merchants.Service, string, *api.Server) {
	t.Helper()
	u, err := url.Parse(storetest.MigratedURL(t, storetest.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	p := startRestartProxy(t, u.Host)
	u.Host = p.addr
	db, err := store.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ms, key, newServer := apiOnDB(t, db, name)
	return p, db, ms, key, newServer()
}

// restartProxy forwards TCP connections to a database server and can play
// its restart: cut every connection, refuse new ones for a while.
type restartProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

func startRestartProxy(t *testing.T, target string) *restartProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &restartProxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.ln.Close()
		for c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *restartProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *restartProxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() { io.Copy(s, c); s.Close(); c.Close() }()
	io.Copy(c, s)
	c.Close()
	s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// restart takes the server down for a while and up again. It returns how
// many connections (each counted on both sides) it cut.
func (p *restartProxy) restart(down time.Duration) int {
	cut := p.down()
	time.Sleep(down)
	p.up()
	return cut
}

// down closes the listener, so new connections are refused, and every
// connection; it returns how many it cut.
func (p *restartProxy) down() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	cut := len(p.conns)
	for c := range p.conns {
		c.Close()
	}
	return cut
}

// up listens again on the same address.
func (p *restartProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Errorf("listen again on %s: %v", p.addr, err)
		return
	}
	p.serve(ln)
}
