package crash

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/dukpt"
	"github.com/payd/payd/internal/terminals/simulator"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// crashBDK is the live TDES base derivation key of the card crash test.
const crashBDK = "3C1F2E3D4C5B6A798877665544332299"

// TestKillBetweenCardAuthorizeAndAnswer: live card-present payments from a
// terminal whose card gateway is the simulator's, each request retried with
// its key until answered, while every payd process is killed at the moment
// the gateway has authorised (and captured) a card and before payd hears
// its answer. The retry resumes the terminal payment from its recovery
// point and asks the gateway again under the same idempotency key, or finds
// it settled by reconciliation, which asked by reference: one authorisation
// at the gateway per payment, none refused, each intent succeeded once with
// one credit, and a balanced book.
//
// It runs twice per engine: with reconciliation every second, which settles
// the dead runs' payments before their leases run out (the retries then get
// the recorded outcome), and with reconciliation every minute, so the
// retries resume them by asking the gateway again.
func TestKillBetweenCardAuthorizeAndAnswer(t *testing.T) {
	for _, engine := range storetest.Engines() {
		for _, settler := range []string{"reconciliation", "retry"} {
			t.Run(string(engine)+"/"+settler, func(t *testing.T) { cardCrashRun(t, engine, settler) })
		}
	}
}

func cardCrashRun(t *testing.T, engine storetest.Engine, settler string) {
	n := 3
	if engine == storetest.SQLite {
		n = 1
	}
	payments, crashes := 40, 4
	if !*full {
		payments, crashes = 12, 2
	}
	prov, cl, term, dev, num := liveCardCluster(t, engine, n, settler)

	every := max(payments/(crashes+1), 1)
	var restarting sync.WaitGroup
	prov.mu.Lock()
	prov.crashKind = "cards"
	prov.crashAt = func(n int) bool { return n%every == 0 && n/every <= crashes }
	prov.crash = func() { killAll(t, cl.f, &restarting) }
	prov.mu.Unlock()

	start := time.Now()
	intents := map[string]string{} // create key → intent id
	var total int64
	// A device takes one payment at a time, its counter rising.
	for i := 0; i < payments; i++ {
		amount := int64(100 + i)
		arqc := make([]byte, 8)
		rand.Read(arqc)
		read, err := card.EncodeChipRead("4242424242424242", time.Now().Year()+2, time.June, arqc, amount, num)
		if err != nil {
			t.Fatal(err)
		}
		ksn, payload, err := dev.Encrypt(read)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("card-%d", i)
		a, ok := cl.c.Post(key, "/v1/terminals/"+term+"/payments",
			map[string]any{"amount_minor": amount, "currency": "DJF", "ksn": ksn, "encrypted_payload": payload})
		var in struct{ ID, Status string }
		json.Unmarshal(a.Body, &in)
		if !ok || a.Status != 201 || in.Status != "succeeded" {
			t.Fatalf("payment %d: %d %s", i, a.Status, a.Body)
		}
		intents[key] = in.ID
		total += amount
	}
	restarting.Wait()
	elapsed := time.Since(start)
	logFives(t, cl.c)

	prov.mu.Lock()
	defer prov.mu.Unlock()
	k := prov.kinds["cards"]
	k.onceEach(t, "card authorisations", payments)
	t.Logf("%d live card payments in %v: %d crashes after the gateway authorised, %d keys asked again (replayed), %d references asked, %d sends, %d 409 while a dead run held its key",
		payments, elapsed.Round(time.Millisecond), prov.crashes, len(k.replayed), len(k.asked), cl.c.Tries.Load(), cl.c.InUse.Load())
	if prov.crashes != crashes {
		t.Errorf("%d crashes, want %d", prov.crashes, crashes)
	}
	if settler == "retry" && len(k.replayed) == 0 {
		t.Error("no retry resumed a crashed payment by asking the gateway again under its key")
	}
	if settler == "reconciliation" && len(k.asked) == 0 {
		t.Error("reconciliation asked the gateway about no payment")
	}
	if strings.Contains(cl.f.Logs(), "4242424242424242") {
		t.Error("the card number is in a payd log")
	}
	db := cl.db(t)
	keyedload.CheckAnswers(t, db, cl.c)
	keyedload.CheckEffects(t, db, keyedload.Workload{Intents: payments}, &keyedload.Result{Intents: intents, Payouts: map[string]string{}})
	var settled, sum int64
	if err := db.QueryRow(t.Context(), `SELECT COUNT(*), COALESCE(SUM(amount_minor), 0) FROM terminal_payments
				WHERE status = 'succeeded' AND payment_intent_id IS NOT NULL`).Scan(&settled, &sum); err != nil {
		t.Fatal(err)
	}
	if settled != int64(payments) || sum != total {
		t.Errorf("%d terminal payments succeeded for %d minor units, want %d for %d", settled, sum, payments, total)
	}
}

// liveCardCluster starts n payd processes on engine, live on the provider
// simulator's wallet_a rail with the crash tests' P2PE key, reconciling every
// second (settler "reconciliation") or every minute (settler "retry", so
// that retries settle what a dead process left), and registers one live
// countertop terminal: the set-up the card crash tests share.
func liveCardCluster(t *testing.T, engine storetest.Engine, n int, settler string) (*provider, *cluster, string, *simulator.Device, string) {
	keys := filepath.Join(t.TempDir(), "p2pe.json")
	if err := os.WriteFile(keys, []byte(`{"countertop":"`+crashBDK+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	prov := startProvider(t, sim.Config{})
	f := &keyedload.Fleet{}
	callbacks, _ := front(t, f)
	cl := startClusterOn(t, engine, n, f, "PAYD_IDEMPOTENCY_LEASE=3s", "PAYD_PUBLIC_URL="+callbacks,
		"PAYD_P2PE_KEYS="+keys, "PAYD_RECONCILE_INTERVAL="+map[string]string{"reconciliation": "1s", "retry": "1m"}[settler])
	goLive(t, cl, prov, "wallet_a")
	term, dev := liveTerminal(t, cl)
	num, _ := money.Numeric("DJF")
	return prov, cl, term, dev, num
}

// liveTerminal registers and activates a countertop terminal on the
// cluster's live key and returns it with its device, which encrypts under
// crashBDK.
func liveTerminal(t *testing.T, cl *cluster) (string, *simulator.Device) {
	t.Helper()
	a, ok := cl.c.Post("term-register", "/v1/terminals", map[string]any{"serial_number": "CRASH-1", "model": "countertop"})
	if !ok || a.Status != 201 {
		t.Fatalf("register: %d %s", a.Status, a.Body)
	}
	var term struct{ ID string }
	json.Unmarshal(a.Body, &term)
	initial, err := simulator.InitialKSN(terminals.Countertop, term.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := cl.c.Post("term-activate", "/v1/terminals/"+term.ID+"/activate", map[string]any{"ksn": initial.String()}); !ok || a.Status != 200 {
		t.Fatalf("activate: %d %s", a.Status, a.Body)
	}
	bdk, err := dukpt.ParseKey(crashBDK)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := simulator.NewDeviceWithBDK(terminals.Countertop, term.ID, bdk, 1)
	if err != nil {
		t.Fatal(err)
	}
	return term.ID, dev
}

// TestKillBetweenCardCaptureAndAnswer: live card-present payments taken
// with capture_method manual (held at the simulator's card gateway), then
// captured in part, each capture retried with its key until answered,
// while every payd process is killed at the moment the gateway has captured
// and before payd hears its answer. The retry resumes the capture from its
// recovery point and sends it again under the gateway key
// <tpay_id>:capture (the gateway replays its answer), or finds it settled
// by reconciliation, which asked the gateway by reference: one capture at
// the gateway per payment, none refused, each intent succeeded once with
// one credit of the captured amount, and a balanced book. Twice per engine,
// as TestKillBetweenCardAuthorizeAndAnswer.
func TestKillBetweenCardCaptureAndAnswer(t *testing.T) {
	for _, engine := range storetest.Engines() {
		for _, settler := range []string{"reconciliation", "retry"} {
			t.Run(string(engine)+"/"+settler, func(t *testing.T) { captureCrashRun(t, engine, settler) })
		}
	}
}

func captureCrashRun(t *testing.T, engine storetest.Engine, settler string) {
	n := 2
	if engine == storetest.SQLite {
		n = 1
	}
	payments, crashes := 20, 4
	if !*full {
		payments, crashes = 8, 2
	}
	prov, cl, term, dev, num := liveCardCluster(t, engine, n, settler)

	// Authorised, held: nothing is killed yet.
	intents := map[string]string{} // authorise key → intent id
	ids := make([]string, payments)
	for i := range payments {
		amount := int64(1000 + i)
		arqc := make([]byte, 8)
		rand.Read(arqc)
		read, err := card.EncodeChipRead("4242424242424242", time.Now().Year()+2, time.June, arqc, amount, num)
		if err != nil {
			t.Fatal(err)
		}
		ksn, payload, err := dev.Encrypt(read)
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("held-%d", i)
		a, ok := cl.c.Post(key, "/v1/terminals/"+term+"/payments",
			map[string]any{"amount_minor": amount, "currency": "DJF", "ksn": ksn, "encrypted_payload": payload, "capture_method": "manual"})
		var in struct{ ID, Status string }
		json.Unmarshal(a.Body, &in)
		if !ok || a.Status != 201 || in.Status != "requires_capture" {
			t.Fatalf("payment %d: %d %s", i, a.Status, a.Body)
		}
		intents[key], ids[i] = in.ID, in.ID
	}

	every := max(payments/(crashes+1), 1)
	var restarting sync.WaitGroup
	prov.mu.Lock()
	prov.crashKind = "captures"
	prov.crashAt = func(n int) bool { return n%every == 0 && n/every <= crashes }
	prov.crash = func() { killAll(t, cl.f, &restarting) }
	prov.mu.Unlock()

	start := time.Now()
	var total int64
	for i, id := range ids {
		captured := int64(900 + i) // the rest of the authorisation is released
		a, ok := cl.c.Post(fmt.Sprintf("capture-%d", i), "/v1/payment_intents/"+id+"/capture", map[string]any{"amount_to_capture_minor": captured})
		var in struct {
			Status              string `json:"status"`
			AmountCapturedMinor int64  `json:"amount_captured_minor"`
		}
		json.Unmarshal(a.Body, &in)
		if !ok || a.Status != 200 || in.Status != "succeeded" || in.AmountCapturedMinor != captured {
			t.Fatalf("capture %d: %d %s", i, a.Status, a.Body)
		}
		total += captured
	}
	restarting.Wait()
	elapsed := time.Since(start)
	logFives(t, cl.c)

	prov.mu.Lock()
	defer prov.mu.Unlock()
	k := prov.kinds["captures"]
	k.onceEach(t, "captures", payments)
	prov.kinds["cards"].onceEach(t, "card authorisations", payments)
	t.Logf("%d live captures in %v: %d crashes after the gateway captured, %d keys asked again (replayed), %d sends, %d 409 while a dead run held its key",
		payments, elapsed.Round(time.Millisecond), prov.crashes, len(k.replayed), cl.c.Tries.Load(), cl.c.InUse.Load())
	if prov.crashes != crashes {
		t.Errorf("%d crashes, want %d", prov.crashes, crashes)
	}
	if settler == "retry" && len(k.replayed) == 0 {
		t.Error("no retry resumed a crashed capture by sending it again under its key")
	}
	if settler == "reconciliation" && len(prov.kinds["cards"].asked) == 0 {
		t.Error("reconciliation asked the gateway about no authorisation")
	}
	db := cl.db(t)
	keyedload.CheckAnswers(t, db, cl.c)
	keyedload.CheckEffects(t, db, keyedload.Workload{Intents: payments}, &keyedload.Result{Intents: intents, Payouts: map[string]string{}})
	var sum, open int64
	if err := db.QueryRow(t.Context(), `SELECT COALESCE(SUM(amount_captured_minor), 0) FROM payment_intents WHERE status = 'succeeded'`).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(t.Context(), `SELECT COUNT(*) FROM payment_intent_settlements`).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if sum != total || open != 0 {
		t.Errorf("captured %d minor units with %d settlements left, want %d and none", sum, open, total)
	}
}
