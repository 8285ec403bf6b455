package crash

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/payd/payd/internal/testutil"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds payd once for the package's tests (without the race
// detector: the processes are the system under test, not this test).
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "payd-crash-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "payd")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/payd")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is one `payd serve` process, started and SIGKILLed by the test.
type proc struct {
	t    *testing.T
	name string
	bin  string
	env  []string
	url  string
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	up     atomic.Bool
	starts int
}

func newProc(t *testing.T, bin, name string, env []string) *proc {
	addr := freeAddr(t)
	return &proc{t: t, name: name, bin: bin, url: "http://" + addr, log: filepath.Join(t.TempDir(), name+".log"),
		env: append(append([]string{}, env...), "PAYD_ADDR="+addr)}
}

// cli runs a payd subcommand with the process's environment.
func (p *proc) cli(args ...string) []byte {
	p.t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Env = p.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("payd %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// start runs `payd serve` and waits for /readyz.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, "serve")
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	p.starts++
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("%s exited while starting; log:\n%s", p.name, tail(p.log))
		default:
		}
		resp, err := http.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				p.up.Store(true)
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 60 s; log:\n%s", p.name, tail(p.log))
		}
	}
}

// kill sends SIGKILL (no shutdown of any kind) and waits for the exit.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
}

// terminate sends SIGTERM and waits (up to d) for a clean exit.
func (p *proc) terminate(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.up.Store(false)
	if p.cmd == nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.exited
		p.cmd = nil
		return fmt.Errorf("%s did not exit within %v of SIGTERM", p.name, d)
	}
	err := p.cmd.ProcessState
	p.cmd = nil
	if !err.Success() {
		return fmt.Errorf("%s exited after SIGTERM with %v; log:\n%s", p.name, err, tail(p.log))
	}
	return nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
