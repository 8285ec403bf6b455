package webhooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/webhook"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// paydBinary builds cmd/payd once per test binary run.
func paydBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		var err error
		if buildDir, err = os.MkdirTemp("", "payd-crash-"); err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(buildDir, "payd")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/payd")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// paydProcess is a running `payd serve`.
type paydProcess struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
	url  string
}

func startPayd(t *testing.T, bin string, env []string) *paydProcess {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), append(env, "PAYD_ADDR="+addr, "PAYD_LOG_LEVEL=warn")...)
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, &lockedWriter{w: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &paydProcess{cmd: cmd, logs: logs, url: "http://" + addr}
	t.Cleanup(func() { p.kill() })
	waitFor(t, 60*time.Second, "payd to be ready", func() bool {
		resp, err := http.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// kill is kill -9: no graceful shutdown, no deferred work.
func (p *paydProcess) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (p *paydProcess) call(t *testing.T, key, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func (p *paydProcess) deliveries(t *testing.T, key, eventID string) []deliveryJSON {
	t.Helper()
	status, body := p.call(t, key, "GET", "/v1/events/"+eventID+"/deliveries", nil)
	if status != 200 {
		t.Fatalf("deliveries: %d %s", status, body)
	}
	var l struct{ Data []deliveryJSON }
	json.Unmarshal(body, &l)
	return l.Data
}

// TestCrashBeforeDelivery kills a real `payd serve` with SIGKILL between the
// state change and the delivery, twice: once with the event committed but not
// yet dispatched (the process runs no workers), once with the delivery made
// and its first attempt failed (the receiver is down). After a restart, both
// events reach the receiver, signed.
func TestCrashBeforeDelivery(t *testing.T) {
	t.Parallel() // mostly waiting (retry schedules, a 6 s answer, process starts)
	if testing.Short() {
		t.Skip("builds and runs the payd binary: skipped with -short")
	}
	bin := paydBinary(t)
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			dbURL := storetest.URL(t, eng)
			env := []string{"PAYD_DATABASE_URL=" + dbURL, "PAYD_WEBHOOK_RETRY_SCHEDULE=" + strings.Repeat("300ms,", 30) + "300ms"}
			cmd := exec.Command(bin, "merchant", "create", "--name", "Crash test", "--json")
			cmd.Env = append(os.Environ(), env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("merchant create: %v", err)
			}
			var m struct {
				SecretKeys []string `json:"secret_keys"`
			}
			if err := json.Unmarshal(out, &m); err != nil || len(m.SecretKeys) == 0 {
				t.Fatalf("merchant create printed %s", out)
			}
			key := m.SecretKeys[0]
			rcvAddr := freeAddr(t) // nothing listens there yet: the receiver is down

			// 1. The event commits; no worker runs; kill -9.
			p := startPayd(t, bin, append(env, "PAYD_WORKERS=false"))
			status, body := p.call(t, key, "POST", "/v1/webhook_endpoints", map[string]any{"url": "http://" + rcvAddr + "/hooks", "enabled_events": []string{"*"}})
			if status != 201 {
				t.Fatalf("create endpoint: %d %s", status, body)
			}
			var ep endpointJSON
			json.Unmarshal(body, &ep)
			status, body = p.call(t, key, "POST", "/v1/sandbox/webhooks/trigger", map[string]any{"event_type": "payment_intent.succeeded"})
			if status != 201 {
				t.Fatalf("trigger: %d %s", status, body)
			}
			var ev1 eventJSON
			json.Unmarshal(body, &ev1)
			if ds := p.deliveries(t, key, ev1.ID); len(ds) != 0 {
				t.Fatalf("dispatched without workers: %+v", ds)
			}
			p.kill()

			// 2. Workers dispatch it and fail against the down receiver; a
			// second event is made; kill -9 once both have failed attempts.
			p = startPayd(t, bin, env)
			status, body = p.call(t, key, "POST", "/v1/sandbox/webhooks/trigger", map[string]any{"event_type": "payout.failed"})
			if status != 201 {
				t.Fatalf("trigger: %d %s", status, body)
			}
			var ev2 eventJSON
			json.Unmarshal(body, &ev2)
			for _, id := range []string{ev1.ID, ev2.ID} {
				waitFor(t, 60*time.Second, "a failed attempt for "+id, func() bool {
					ds := p.deliveries(t, key, id)
					return len(ds) == 1 && len(ds[0].Attempts) >= 1 && ds[0].Status == "pending"
				})
			}
			p.kill()

			// 3. The receiver comes up; payd restarts; both arrive.
			var mu sync.Mutex
			got := map[string]int{}
			var bad []error
			ln, err := net.Listen("tcp", rcvAddr)
			if err != nil {
				t.Fatalf("receiver on %s: %v", rcvAddr, err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				d, err := webhook.Verify(ep.Secret, r.Header, b)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					bad = append(bad, err)
					w.WriteHeader(400)
					return
				}
				got[d.EventID]++
			})}
			go srv.Serve(ln)
			defer srv.Close()
			p = startPayd(t, bin, env)
			for _, id := range []string{ev1.ID, ev2.ID} {
				waitFor(t, 90*time.Second, "delivery of "+id+" after the restart", func() bool {
					ds := p.deliveries(t, key, id)
					return len(ds) == 1 && ds[0].Status == "succeeded"
				})
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bad) > 0 || got[ev1.ID] < 1 || got[ev2.ID] < 1 {
				t.Fatalf("receiver got %v, verification errors %v\npayd logs:\n%s", got, bad, p.logs.String())
			}
			p.kill()
		})
	}
}
