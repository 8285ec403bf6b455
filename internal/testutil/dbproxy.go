package testutil

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// DBProxy forwards TCP connections to a database server and can play its
// restart or loss: cut every connection, refuse new ones for a while. Tests
// reach PostgreSQL through it to see what payd does when its database goes
// away (Addr is the address to put in the database URL).
type DBProxy struct {
	t      testing.TB
	target string
	addr   string // Addr
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

// StartDBProxy listens on a loopback port and forwards to target until the test ends.
func StartDBProxy(t testing.TB, target string) *DBProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &DBProxy{t: t, target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
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

func (p *DBProxy) serve(ln net.Listener) {
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

func (p *DBProxy) forward(c net.Conn) {
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

// Restart takes the server down for a while and up again. It returns how
// many connections (each counted on both sides) it cut.
func (p *DBProxy) Restart(down time.Duration) int {
	cut := p.Down()
	time.Sleep(down)
	p.Up()
	return cut
}

// Down closes the listener, so new connections are refused, and every
// connection; it returns how many it cut.
func (p *DBProxy) Down() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ln.Close()
	cut := len(p.conns)
	for c := range p.conns {
		c.Close()
	}
	return cut
}

// Up listens again on the same address.
func (p *DBProxy) Up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Errorf("listen again on %s: %v", p.addr, err)
		return
	}
	p.serve(ln)
}

// Addr is the address the proxy listens on (host:port).
func (p *DBProxy) Addr() string { return p.addr }
