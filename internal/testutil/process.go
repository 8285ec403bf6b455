package testutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildPayd builds cmd/payd into a directory of the test's and returns the
// binary's path, for tests that run payd as a real process (and kill it).
func BuildPayd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payd")
	if err := buildPayd(RepoRoot(t), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func buildPayd(root, bin string) error {
	build := exec.Command("go", "build", "-o", bin, "./cmd/payd")
	build.Dir, build.Env = root, GoBuildEnv()
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// GoBuildEnv is the environment of a test's own `go build` (payd, a
// consumer module, the samples' program), the test's own environment with
// extra added: cgo off, as payd ships (deploy/Dockerfile builds a static
// binary) and as on a machine with only Go. Every binary the tests build is
// then built from one set of compiled packages: the first build compiles
// them, later ones (in any test process) find them in the build cache and
// link; with cgo on beside the image's build the packages would be compiled
// twice.
func GoBuildEnv(extra ...string) []string {
	return append(append(os.Environ(), "CGO_ENABLED=0"), extra...)
}

var shared struct {
	once     sync.Once
	dir, bin string
	err      error
}

// SharedPayd is BuildPayd once for the whole test binary, for a package
// whose several tests run payd (without the race detector: the processes
// are the system under test). The package's TestMain calls
// RemoveSharedPayd after m.Run.
func SharedPayd(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() {
		// RepoRoot fails the test with Fatal (ending this func early):
		// the error is set first, so later callers fail too rather than
		// get an empty binary path.
		shared.err = errors.New("testutil: the repository root was not found")
		root := RepoRoot(t)
		shared.err = nil
		if shared.dir, shared.err = os.MkdirTemp("", "payd-bin-"); shared.err != nil {
			return
		}
		shared.bin = filepath.Join(shared.dir, "payd")
		shared.err = buildPayd(root, shared.bin)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.bin
}

// RemoveSharedPayd removes the binary SharedPayd built, if it built one.
func RemoveSharedPayd() {
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// FreeAddr returns a loopback address no one listens on now.
//
// The port is drawn below the kernel's ephemeral range (32768 and up on
// Linux): a port the kernel handed out for ":0" is closed here and bound
// again only by the process started later, and meanwhile the kernel may
// give it to any outgoing connection of the tests running alongside (a
// payd failed to start with "address already in use" so). Below that range
// only another test's choice can take it, and each choice is random.
func FreeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken
		}
		l.Close()
		return addr
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Process is a payd subcommand run as its own process (`payd serve`,
// `payd provider-sim`), its output in a log file. It is started, killed and
// stopped again as a test needs, from any goroutine: Start, TryStart, Kill
// and Terminate take turns.
type Process struct {
	T       *testing.T
	Bin     string
	Env     []string
	LogPath string
	// URL is where `payd serve` answers, for a process made by NewServer.
	URL string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	starts int
}

// NewProcess describes a process of bin with env added to this process's
// environment; nothing runs until Start. It is killed when the test ends if
// it still runs.
func NewProcess(t *testing.T, bin string, env ...string) *Process {
	p := &Process{T: t, Bin: bin, Env: append(os.Environ(), env...), LogPath: filepath.Join(t.TempDir(), "process.log")}
	t.Cleanup(p.Kill)
	return p
}

// NewServer is NewProcess for `payd serve` on a free loopback address
// (PAYD_ADDR), answering at URL; Serve starts it.
func NewServer(t *testing.T, bin string, env ...string) *Process {
	addr := FreeAddr(t)
	p := NewProcess(t, bin, append(slices.Clip(env), "PAYD_ADDR="+addr)...)
	p.URL = "http://" + addr
	return p
}

// Serve starts `payd serve` and waits until /readyz answers 200; a failure
// fails the test.
func (p *Process) Serve() {
	p.T.Helper()
	p.Start(p.URL+"/readyz", "serve")
}

// TryServe is Serve returning the failure, for another goroutine than the
// test's.
func (p *Process) TryServe() error {
	return p.TryStart(p.URL+"/readyz", "serve")
}

// Run runs a short command (payd merchant create, ...) and returns its
// standard output; a failure fails the test.
func (p *Process) Run(args ...string) []byte {
	p.T.Helper()
	cmd := exec.Command(p.Bin, args...)
	cmd.Env = p.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		p.T.Fatalf("payd %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// Start starts a long-running command and waits until GET ready answers
// 200; a failure fails the test.
func (p *Process) Start(ready string, args ...string) {
	p.T.Helper()
	if err := p.TryStart(ready, args...); err != nil {
		p.T.Fatal(err)
	}
}

// TryStart is Start returning the failure (the process exited, or was not
// ready within 60 s), for another goroutine than the test's.
func (p *Process) TryStart(ready string, args ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	what := strings.Join(args, " ")
	if p.running() {
		return fmt.Errorf("%s: started while it runs", what)
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.Bin, args...)
	cmd.Env = p.Env
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
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if !p.running() {
			return fmt.Errorf("%s exited while starting; log:\n%s", what, p.Tail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after 60 s; log:\n%s", what, ready, p.Tail())
		}
	}
}

// Running reports whether the started process has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running()
}

func (p *Process) running() bool {
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Starts is how many times the process was started.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Kill sends SIGKILL (no shutdown, no cleanup) and waits for the exit; it
// does nothing when the process does not run.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running() {
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// Terminate sends SIGTERM and waits up to d for the exit, which must be
// clean; past d the process is killed and that is the error.
func (p *Process) Terminate(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.running() {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(d):
		p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not exit within %v of SIGTERM", filepath.Base(p.Bin), d)
	}
	if st := p.cmd.ProcessState; !st.Success() {
		return fmt.Errorf("%s exited after SIGTERM with %v; log:\n%s", filepath.Base(p.Bin), st, p.Tail())
	}
	return nil
}

// Tail is the end of the process's log (of all its runs).
func (p *Process) Tail() string {
	b, _ := os.ReadFile(p.LogPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// LogLines returns the lines of the process's log (of all its runs) that
// contain s.
func (p *Process) LogLines(s string) []string {
	b, _ := os.ReadFile(p.LogPath)
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, s) {
			lines = append(lines, line)
		}
	}
	return lines
}

// Call sends a JSON request with a bearer key and extra headers and returns
// the status and body; a transport error fails the test.
func Call(t *testing.T, method, url, key string, body any, headers map[string]string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, r)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// CallQuiet POSTs a JSON body and ignores the outcome: for a request a test
// leaves hanging (and whose server it kills) from another goroutine.
func CallQuiet(url, key string, body any, headers map[string]string) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		return
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
