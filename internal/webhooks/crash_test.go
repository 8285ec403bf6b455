package webhooks_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/webhook"
)

// startPayd starts `payd serve` with env (its workers' logs at warn) and
// waits until it is ready.
func startPayd(t *testing.T, bin string, env []string) *testutil.Process {
	t.Helper()
	p := testutil.NewServer(t, bin, append(slices.Clip(env), "PAYD_LOG_LEVEL=warn")...)
	p.Serve()
	return p
}

func processCall(t *testing.T, p *testutil.Process, key, method, path string, body any) (int, []byte) {
	t.Helper()
	return testutil.Call(t, method, p.URL+path, key, body, nil)
}

func processDeliveries(t *testing.T, p *testutil.Process, key, eventID string) []deliveryJSON {
	t.Helper()
	status, body := processCall(t, p, key, "GET", "/v1/events/"+eventID+"/deliveries", nil)
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
	bin := testutil.BuildPayd(t)
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			dbURL := storetest.URL(t, eng)
			// Every process shares one secrets key (serve refuses PostgreSQL without one).
			env := []string{"PAYD_DATABASE_URL=" + dbURL, "PAYD_SECRETS_KEY=" + strings.Repeat("5c", 32),
				"PAYD_WEBHOOK_RETRY_SCHEDULE=" + strings.Repeat("300ms,", 30) + "300ms"}
			out := testutil.NewProcess(t, bin, env...).Run("merchant", "create", "--name", "Crash test", "--json")
			var m struct {
				SecretKeys []string `json:"secret_keys"`
			}
			if err := json.Unmarshal(out, &m); err != nil || len(m.SecretKeys) == 0 {
				t.Fatalf("merchant create printed %s", out)
			}
			key := m.SecretKeys[0]
			rcvAddr := testutil.FreeAddr(t) // nothing listens there yet: the receiver is down

			// 1. The event commits; no worker runs; kill -9.
			p := startPayd(t, bin, append(env, "PAYD_WORKERS=false"))
			status, body := processCall(t, p, key, "POST", "/v1/webhook_endpoints", map[string]any{"url": "http://" + rcvAddr + "/hooks", "enabled_events": []string{"*"}})
			if status != 201 {
				t.Fatalf("create endpoint: %d %s", status, body)
			}
			var ep endpointJSON
			json.Unmarshal(body, &ep)
			status, body = processCall(t, p, key, "POST", "/v1/sandbox/webhooks/trigger", map[string]any{"event_type": "payment_intent.succeeded"})
			if status != 201 {
				t.Fatalf("trigger: %d %s", status, body)
			}
			var ev1 eventJSON
			json.Unmarshal(body, &ev1)
			if ds := processDeliveries(t, p, key, ev1.ID); len(ds) != 0 {
				t.Fatalf("dispatched without workers: %+v", ds)
			}
			p.Kill()

			// 2. Workers dispatch it and fail against the down receiver; a
			// second event is made; kill -9 once both have failed attempts.
			p = startPayd(t, bin, env)
			status, body = processCall(t, p, key, "POST", "/v1/sandbox/webhooks/trigger", map[string]any{"event_type": "payout.failed"})
			if status != 201 {
				t.Fatalf("trigger: %d %s", status, body)
			}
			var ev2 eventJSON
			json.Unmarshal(body, &ev2)
			for _, id := range []string{ev1.ID, ev2.ID} {
				waitFor(t, 60*time.Second, "a failed attempt for "+id, func() bool {
					ds := processDeliveries(t, p, key, id)
					return len(ds) == 1 && len(ds[0].Attempts) >= 1 && ds[0].Status == "pending"
				})
			}
			p.Kill()

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
					ds := processDeliveries(t, p, key, id)
					return len(ds) == 1 && ds[0].Status == "succeeded"
				})
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bad) > 0 || got[ev1.ID] < 1 || got[ev2.ID] < 1 {
				t.Fatalf("receiver got %v, verification errors %v\npayd logs:\n%s", got, bad, p.Tail())
			}
			p.Kill()
		})
	}
}
