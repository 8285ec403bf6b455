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
// It runs twice per engine, each time with one settler of the payments a
// dead run left: reconciliation every second, the POS holding its retry back
// until reconciliation has recorded the payment (the retry then gets the
// recorded outcome, asking the gateway nothing); and reconciliation every
// hour, so the retry resumes the payment by asking the gateway again. (Left
// to race, either may win: reconciliation asks once the gateway's timeout of
// 2 s has passed, the retry resumes once the dead run's lease of 3 s has.)
// Each crashed payment's settler is checked.
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
	holdRetries(t, cl, settler, `SELECT COUNT(*) FROM terminal_payments WHERE idempotency_key = ? AND status = 'authorizing'`,
		func(key string) string { return key })

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
	prov.checkSettlers(t, "cards", settler)
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
// second (settler "reconciliation") or every hour (settler "retry", so
// that only retries settle what a dead process left), and registers one live
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
		"PAYD_P2PE_KEYS="+keys, "PAYD_RECONCILE_INTERVAL="+map[string]string{"reconciliation": "1s", "retry": "1h"}[settler])
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

// holdRetries makes the cluster's client, with settler "reconciliation",
// hold back the retry of a request whose process was killed until
// reconciliation has recorded what the dead run left open: until open, a
// COUNT query of one argument, the object of the request's key (object
// maps the key), counts nothing. Reconciliation is then the only settler
// (the dead run is gone, the retry waits), whoever would win a race. With
// settler "retry" the client retries at once.
func holdRetries(t *testing.T, cl *cluster, settler, open string, object func(key string) string) {
	if settler != "reconciliation" {
		return
	}
	db := cl.db(t)
	cl.c.BeforeResend = func(key string) {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var n int
			if err := db.QueryRow(t.Context(), open, object(key)).Scan(&n); err != nil {
				t.Errorf("retry of %s: %v", key, err)
				return
			}
			if n == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("reconciliation left what the request %s started open for 60 s", key)
				return
			}
		}
	}
}

// checkSettlers checks who settled each request of kind (cards or
// captures) that payd died waiting for, by its gateway key
// <tpay_id>:authorize or <tpay_id>:capture: with settler "reconciliation",
// reconciliation asked the gateway about the payment's reference and the
// retry sent nothing again; with "retry", the retry sent the request again
// under its key (the gateway replayed its answer). The caller holds p.mu.
func (p *provider) checkSettlers(t *testing.T, kind, settler string) {
	t.Helper()
	if len(p.crashed) == 0 {
		t.Error("no request crashed")
	}
	k := p.kinds[kind]
	for _, key := range p.crashed {
		ref, _, _ := strings.Cut(key, ":")
		switch asked, replayed := p.kinds["cards"].asked[ref], k.replayed[key]; {
		case settler == "reconciliation" && (asked == 0 || replayed != 0):
			t.Errorf("%s: reconciliation asked the gateway about %s %d times and the retry sent it again %d times, want at least once and never",
				key, ref, asked, replayed)
		case settler == "retry" && replayed == 0:
			t.Errorf("%s: no retry resumed it by sending it again under its key", key)
		}
	}
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
// each time with one settler of the crashed captures, as
// TestKillBetweenCardAuthorizeAndAnswer.
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

	capturing := map[string]string{} // capture key → intent id
	for i, id := range ids {
		capturing[fmt.Sprintf("capture-%d", i)] = id
	}
	holdRetries(t, cl, settler, `SELECT COUNT(*) FROM payment_intent_settlements WHERE payment_intent_id = ?`,
		func(key string) string { return capturing[key] })

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
	prov.checkSettlers(t, "captures", settler)
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
