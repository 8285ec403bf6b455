package crash

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testutil.RemoveSharedPayd()
	os.Exit(code)
}

// proc is one `payd serve` process of a fleet, started and SIGKILLed by the
// test; up says whether clients may send to it.
type proc struct {
	*testutil.Process
	name string
	url  string
	// mu orders start, kill and terminate, so that up is never left true
	// by a start that a kill waiting for it then undoes.
	mu sync.Mutex
	up atomic.Bool
}

func newProc(t *testing.T, bin, name string, env []string) *proc {
	p := testutil.NewServer(t, bin, env...)
	return &proc{Process: p, name: name, url: p.URL}
}

// start runs `payd serve` and waits for /readyz.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.TryServe(); err != nil {
		return err
	}
	p.up.Store(true)
	return nil
}

// kill sends SIGKILL (no shutdown of any kind) and waits for the exit.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	p.Kill()
}

// terminate sends SIGTERM and waits (up to d) for a clean exit.
func (p *proc) terminate(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	return p.Terminate(d)
}
