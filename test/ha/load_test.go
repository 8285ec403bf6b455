package ha

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/internal/testutil/keyedload"
)

const secretsKey = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"

// size is the keyed requests of a scenario: intents created then confirmed
// (two requests each) and payouts created (one).
func size() keyedload.Workload {
	if *long {
		return keyedload.Workload{Intents: 500, Payouts: 500}
	}
	return keyedload.Workload{Intents: 40, Payouts: 40}
}

// fleet is three `payd serve` processes on one database of the topology,
// a merchant with a funded sandbox balance, and a webhook endpoint whose
// receiver records every delivery.
type fleet struct {
	t      *testing.T
	tp     *topology
	dbName string
	procs  *keyedload.Fleet
	hooks  *keyedload.Receiver
	c      *keyedload.Client
}

func startFleet(t *testing.T, tp *topology, dbName string, extraEnv ...string) *fleet {
	t.Helper()
	start := time.Now()
	tp.createDB(dbName)
	bin := testutil.SharedPayd(t)
	t.Logf("payd built in %v", time.Since(start).Round(time.Millisecond))
	env := append([]string{"PAYD_DATABASE_URL=" + tp.url(dbName), "PAYD_SECRETS_KEY=" + secretsKey, "PAYD_RATE_LIMIT=0",
		"PAYD_PUBLIC_RATE_LIMIT=0", "PAYD_DB_MAX_CONNS=12", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=", "PAYD_DEMO=false",
		"PAYD_SANDBOX_TIMEOUT_DELAY=50ms", "PAYD_WEBHOOK_RETRY_SCHEDULE=1s,1s,2s,2s,5s,5s,10s,30s"}, extraEnv...)
	f := &fleet{t: t, tp: tp, dbName: dbName, procs: &keyedload.Fleet{}}
	for i := range 3 {
		f.procs.Procs = append(f.procs.Procs, keyedload.NewProc(t, bin, "payd "+string(rune('0'+i)), env))
	}
	var m struct {
		SecretKeys []string `json:"secret_keys"`
	}
	if err := json.Unmarshal(f.procs.Procs[0].Run("merchant", "create", "--name", "HA test", "--json"), &m); err != nil || len(m.SecretKeys) == 0 {
		t.Fatalf("merchant create: %v", err)
	}
	t.Logf("database made and migrated in %v", time.Since(start).Round(time.Millisecond))
	errc := make(chan error, len(f.procs.Procs))
	for _, p := range f.procs.Procs {
		go func() { errc <- p.Start() }()
	}
	for range f.procs.Procs {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	// A primary with a synchronous standby: no warning that answered
	// payments can be lost (internal/app tests the warning itself).
	for _, p := range f.procs.Procs {
		if lines := p.LogLines("answered payments can be lost"); len(lines) > 0 {
			t.Errorf("%s warned at start on a primary with a synchronous standby: %s", p.Name, lines[0])
		}
	}
	t.Cleanup(func() {
		for _, p := range f.procs.Procs {
			p.Kill()
		}
		if t.Failed() {
			t.Logf("%s", f.procs.Logs())
		}
	})
	f.c = keyedload.NewClient(t, f.procs, m.SecretKeys[0])
	f.c.FiveBackoff = 50 * time.Millisecond
	f.hooks = keyedload.NewReceiver(t)
	a, _ := f.c.Post("endpoint", "/v1/webhook_endpoints", map[string]any{"url": f.hooks.URL, "enabled_events": []string{"*"}})
	if a.Status != 201 {
		t.Fatalf("webhook endpoint: %d %s", a.Status, a.Body)
	}
	if a, _ := f.c.Post("topup", "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 10_000_000}); a.Status != 201 {
		t.Fatalf("top-up: %d %s", a.Status, a.Body)
	}
	f.c.Reset()
	t.Logf("three payd processes serving in %v", time.Since(start).Round(time.Millisecond))
	return f
}

// drive sends w's requests from clients concurrent senders, keys prefixed
// with prefix. The last third of the requests waits for hold (when not
// nil), so a disturbance meets a run that is still going.
func (f *fleet) drive(prefix string, w keyedload.Workload, clients int, hold <-chan struct{}) *keyedload.Result {
	w.Prefix = prefix
	return keyedload.Drive(f.t, f.c, w, clients, hold, 3)
}

// check holds the database (on whichever member is the primary now) to
// exactly one effect per answered key, every answer to its stored one, the
// processes to one start each, `payd ledger verify` to a pass, and the
// webhook endpoint to every event delivered (de-duplicated by event id).
func (f *fleet) check(w keyedload.Workload, res *keyedload.Result) {
	t := f.t
	t.Helper()
	for _, p := range f.procs.Procs {
		if !p.Running() || p.Starts() != 1 {
			t.Errorf("%s: running %v, started %d times (want running, started once)", p.Name, p.Running(), p.Starts())
		}
	}
	db, err := store.Open(context.Background(), f.tp.url(f.dbName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keyedload.WaitSettled(t, db, 30*time.Second)
	keyedload.CheckEffects(t, db, w, res)
	keyedload.CheckAnswers(t, db, f.c)
	t.Logf("effects checked")
	// payd ledger verify (which also finds doubled effects) exits 0.
	out := f.procs.Procs[0].Run("ledger", "verify")
	t.Logf("payd ledger verify: %s", bytes.TrimSpace(out))
	events, delivered, deliveries := keyedload.CheckDelivered(t, db, f.hooks, 60*time.Second)
	t.Logf("webhooks: %d events recorded, %d distinct delivered, %d deliveries", events, delivered, deliveries)
}
