package testutil

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BuildPayd builds cmd/payd into a directory of the test's and returns the
// binary's path, for tests that run payd as a real process (and kill it).
func BuildPayd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/payd")
	build.Dir = RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// FreeAddr returns a loopback address no one listens on now.
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Process is a payd subcommand run as its own process (`payd serve`,
// `payd provider-sim`), its output in a log file.
type Process struct {
	T       *testing.T
	Bin     string
	Env     []string
	LogPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
}

// NewProcess describes a process of bin with env added to this process's
// environment; nothing runs until Start.
func NewProcess(t *testing.T, bin string, env ...string) *Process {
	return &Process{T: t, Bin: bin, Env: append(os.Environ(), env...), LogPath: filepath.Join(t.TempDir(), "process.log")}
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
// 200. The process is killed when the test ends if it still runs.
func (p *Process) Start(ready string, args ...string) {
	p.T.Helper()
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.T.Fatal(err)
	}
	p.cmd = exec.Command(p.Bin, args...)
	p.cmd.Env = p.Env
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		p.T.Fatal(err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		cmd.Wait()
		logf.Close()
		close(exited)
	}(p.cmd, p.exited)
	p.T.Cleanup(func() {
		if p.Running() {
			p.Kill()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) || !p.Running() {
			p.T.Fatalf("%s not ready at %s; log:\n%s", strings.Join(args, " "), ready, p.Tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Running reports whether the started process has not exited.
func (p *Process) Running() bool {
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

// Kill sends SIGKILL (no shutdown, no cleanup) and waits for the exit.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// Tail is the end of the process's log.
func (p *Process) Tail() string {
	b, _ := os.ReadFile(p.LogPath)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
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
