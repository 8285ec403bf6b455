// Package keyedload drives real `payd serve` processes with keyed requests
// the way a careful merchant sends them, and checks the database afterwards.
//
// A Fleet is the processes serving one database; a Client posts keyed
// creates, confirms and payouts to them, retrying each with its
// Idempotency-Key on another process until it gets an answer that is not a
// failure of payd's (no connection, 5xx, 409 while the first run still holds
// the key), and records every key's final answer. Drive sends a workload from
// several concurrent senders. The checks (CheckAnswers, CheckEffects,
// CheckDelivered) hold the database to one effect per acknowledged key, every
// answer to the stored one, each event recorded and delivered once, and a
// balanced ledger.
//
// test/crash (processes killed), test/ha (the database's primary lost) and
// test/upgrade (processes replaced by the next release's) share it.
package keyedload

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
)

// Proc is one `payd serve` process of a fleet, started, stopped and killed
// by the test; Up says whether clients may send to it.
type Proc struct {
	*testutil.Process
	Name string
	// mu orders Start, Kill, Terminate and Replace, so that up is never
	// left true by a start that a kill waiting for it then undoes.
	mu sync.Mutex
	up atomic.Bool
}

// NewProc describes `payd serve` of bin on a free loopback address, with env
// added to the environment; nothing runs until Start.
func NewProc(t *testing.T, bin, name string, env []string) *Proc {
	return &Proc{Process: testutil.NewServer(t, bin, env...), Name: name}
}

// Up reports whether clients may send to the process.
func (p *Proc) Up() bool { return p.up.Load() }

// Start runs `payd serve` and waits for /readyz.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.TryServe(); err != nil {
		return err
	}
	p.up.Store(true)
	return nil
}

// Kill sends SIGKILL (no shutdown of any kind) and waits for the exit.
func (p *Proc) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	p.Process.Kill()
}

// Terminate takes the process out of the clients' choice, then sends
// SIGTERM and waits (up to d) for a clean exit.
func (p *Proc) Terminate(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	return p.Process.Terminate(d)
}

// Replace stops the process gracefully (as Terminate, waiting up to d), then
// starts bin in its place on the same address and waits for /readyz: one
// step of a rolling upgrade.
func (p *Proc) Replace(bin string, d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	if err := p.Process.Terminate(d); err != nil {
		return err
	}
	p.Bin = bin
	if err := p.TryServe(); err != nil {
		return err
	}
	p.up.Store(true)
	return nil
}

// Fleet is the payd processes serving one database.
type Fleet struct {
	Procs []*Proc
	// Restart is held by whoever starts killed processes again, so that
	// two restarts never race to start the same process.
	Restart sync.Mutex
	rr      atomic.Uint64
}

// Pick returns a process that is up, another than avoid when there is one;
// nil when none is up.
func (f *Fleet) Pick(avoid *Proc) *Proc {
	n := len(f.Procs)
	start := int(f.rr.Add(1))
	var fallback *Proc
	for i := 0; i < n; i++ {
		p := f.Procs[(start+i)%n]
		if !p.Up() {
			continue
		}
		if p != avoid {
			return p
		}
		fallback = p
	}
	return fallback
}

// Up returns the processes that are up.
func (f *Fleet) Up() []*Proc {
	var up []*Proc
	for _, p := range f.Procs {
		if p.Up() {
			up = append(up, p)
		}
	}
	return up
}

// Logs is the end of every process's log, for a failure message.
func (f *Fleet) Logs() string {
	var b strings.Builder
	for _, p := range f.Procs {
		fmt.Fprintf(&b, "--- %s (started %d times)\n%s\n", p.Name, p.Starts(), p.Tail())
	}
	return b.String()
}

// LogLines returns the processes' log lines about the request whose answer
// is body (by its request id), for a failure message.
func (f *Fleet) LogLines(body string) string {
	var e struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if i := strings.Index(body, "{"); i < 0 || json.Unmarshal([]byte(body[i:]), &e) != nil || e.Error.RequestID == "" {
		return ""
	}
	var b strings.Builder
	for _, p := range f.Procs {
		for _, line := range p.LogLines(e.Error.RequestID) {
			b.WriteString("\n  " + p.Name + ": " + line)
		}
	}
	return b.String()
}
