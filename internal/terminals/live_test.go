package terminals_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
	"github.com/payd/payd/internal/terminals/dukpt"
	"github.com/payd/payd/internal/terminals/simulator"
)

// liveCard is a merchant gone live with a wallet_a connection to a
// simulator (the card gateway), and one active live terminal whose device
// encrypts under the live BDK.
type liveCard struct {
	h      *harness
	sim    *apptest.Sim
	mid    string
	key    string // live secret key
	apiKey string // the merchant's API key at the gateway
	termID string
	dev    *simulator.Device
}

var liveMerchants struct {
	sync.Mutex
	n int
}

// goLiveCard connects wallet_a (with the given call timeout) unless
// provider names another rail, makes a live key, and registers and
// activates a countertop terminal bound to its device.
func goLiveCard(t *testing.T, h *harness, s *apptest.Sim, provider, timeout string) *liveCard {
	t.Helper()
	ctx := context.Background()
	ms := h.e.Main.Merchants
	liveMerchants.Lock()
	liveMerchants.n++
	name := "Live card " + string(rune('A'+liveMerchants.n))
	liveMerchants.Unlock()
	c, err := ms.Create(ctx, merchants.CreateParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := ms.SetKYC(ctx, c.MerchantID, "approved"); err != nil {
		t.Fatal(err)
	}
	lc := &liveCard{h: h, sim: s, mid: c.MerchantID, apiKey: "prov_key_" + c.MerchantID}
	if err := ms.ConnectProvider(ctx, c.MerchantID, provider, merchants.ProviderConfig{BaseURL: s.URL + "/" + provider,
		APIKey: lc.apiKey, CallbackSecret: "prov_cbsec_" + c.MerchantID, Timeout: timeout}); err != nil {
		t.Fatal(err)
	}
	k, err := ms.CreateKey(ctx, c.MerchantID, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	lc.key = k.Secret
	r := lc.post(t, "/v1/terminals", map[string]any{"serial_number": "LIVE-" + newKey(), "model": "countertop", "outlet_id": "outlet_live"}, newKey())
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	lc.termID = r.Map(t)["id"].(string)
	initial, err := simulator.InitialKSN(terminals.Countertop, lc.termID)
	if err != nil {
		t.Fatal(err)
	}
	if r := lc.post(t, "/v1/terminals/"+lc.termID+"/activate", map[string]any{"ksn": initial.String()}, newKey()); r.Status != 200 {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	bdk, err := dukpt.ParseKey(liveBDKTDES)
	if err != nil {
		t.Fatal(err)
	}
	if lc.dev, err = simulator.NewDeviceWithBDK(terminals.Countertop, lc.termID, bdk, 1); err != nil {
		t.Fatal(err)
	}
	return lc
}

func (lc *liveCard) post(t *testing.T, path string, body any, idemKey string) *apptest.Response {
	t.Helper()
	return lc.h.do(t, apptest.Request{Method: "POST", Path: path, Key: lc.key, Body: body, Headers: map[string]string{"Idempotency-Key": idemKey}})
}

// body encrypts a chip read of pan on the terminal's device.
func (lc *liveCard) body(t *testing.T, pan string, amount int64) map[string]any {
	t.Helper()
	return lc.h.payment(t, lc.dev, pan, amount, readOpts{})
}

// pay posts body under idemKey.
func (lc *liveCard) pay(t *testing.T, body map[string]any, idemKey string) *apptest.Response {
	t.Helper()
	return lc.post(t, "/v1/terminals/"+lc.termID+"/payments", body, idemKey)
}

func (lc *liveCard) available(t *testing.T) int64 {
	t.Helper()
	var b struct {
		Balances []struct {
			Currency  string
			Available int64
		}
	}
	lc.h.do(t, apptest.Request{Method: "GET", Path: "/v1/balance", Key: lc.key}).JSON(t, &b)
	for _, x := range b.Balances {
		if x.Currency == "DJF" {
			return x.Available
		}
	}
	return 0
}

// cardIntent is what the tests read of a card-present intent.
type cardIntent struct {
	ID                  string `json:"id"`
	Status              string `json:"status"`
	AmountCapturedMinor int64  `json:"amount_captured_minor"`
	Livemode            bool   `json:"livemode"`
	Provider            string `json:"provider"`
	LastError           *struct {
		Code        string `json:"code"`
		DeclineCode string `json:"decline_code"`
	} `json:"last_error"`
	PaymentMethodDetails struct {
		Type        string `json:"type"`
		CardPresent struct {
			Brand      string `json:"brand"`
			Last4      string `json:"last4"`
			AuthCode   string `json:"auth_code"`
			TerminalID string `json:"terminal_id"`
		} `json:"card_present"`
	} `json:"payment_method_details"`
}

func decodeIntent(t *testing.T, r *apptest.Response, status int) cardIntent {
	t.Helper()
	if r.Status != status {
		t.Fatalf("got %d %s, want %d", r.Status, r.Body, status)
	}
	var in cardIntent
	if err := json.Unmarshal(r.Body, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

// once checks that a terminal payment's intent, its succeeded event and
// its ledger credit exist exactly once.
func (lc *liveCard) once(t *testing.T, intentID string) {
	t.Helper()
	db := lc.h.e.Main.DB
	for q, want := range map[string]int{
		"SELECT COUNT(*) FROM events WHERE type = 'payment_intent.succeeded' AND object_id = ?": 1,
		"SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?":                          1,
		"SELECT COUNT(*) FROM terminal_payments WHERE payment_intent_id = ?":                    1,
	} {
		if n := storetest.Count(t, db, q, intentID); n != want {
			t.Fatalf("%s: %d, want %d", q, n, want)
		}
	}
}

const liveBDKTDES = "8C1F2E3D4C5B6A798877665544332211"

// TestLiveCardPresent runs live card-present payments end to end against
// the provider simulator's card gateway, on both engines: approved,
// declined, a timeout settled by reconciliation and by the POS's retry,
// duplicate answers (retries, several reconciliations at once) changing
// nothing twice, live refunds through the gateway, and no card data in
// any log line (payd's and the simulator's), row or response.
func TestLiveCardPresent(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "p2pe.json")
	if err := os.WriteFile(keys, []byte(`{"countertop":"`+liveBDKTDES+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		h := newHarness(t, e)
		simLogs := &apptest.SyncBuffer{}
		simLogger := slog.New(slog.NewTextHandler(simLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		// Every callback twice: a card refund's outcome is recorded once.
		s := apptest.StartSim(t, sim.Config{Logger: simLogger, DuplicateCallbacks: true})

		t.Run("approved", func(t *testing.T) {
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			key := newKey()
			body := lc.body(t, cardgateway.CardApproved, 700)
			in := decodeIntent(t, lc.pay(t, body, key), 201)
			if in.Status != "succeeded" || !in.Livemode || in.AmountCapturedMinor != 700 || in.Provider != "wallet_a" ||
				in.PaymentMethodDetails.CardPresent.Last4 != "4242" || len(in.PaymentMethodDetails.CardPresent.AuthCode) != 6 {
				t.Fatalf("approved: %+v", in)
			}
			if n := s.CardAuthorizations(lc.apiKey); n != 1 {
				t.Fatalf("%d authorisations at the gateway", n)
			}
			// The same request again: the stored answer, no second authorisation.
			again := lc.pay(t, body, key)
			if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("replay: %d %s", again.Status, again.Body)
			}
			if n := s.CardAuthorizations(lc.apiKey); n != 1 {
				t.Fatalf("%d authorisations after a replay", n)
			}
			lc.once(t, in.ID)
			if a := lc.available(t); a != 700 {
				t.Fatalf("available %d, want 700", a)
			}

			t.Run("refund through the gateway", func(t *testing.T) {
				r := lc.post(t, "/v1/refunds", map[string]any{"payment_intent": in.ID, "amount_minor": 300}, newKey())
				var re struct {
					ID, Status string
				}
				r.JSON(t, &re)
				if r.Status != 201 || re.Status != "succeeded" {
					t.Fatalf("live card refund: %d %s\n%s", r.Status, r.Body, e.Logs.String())
				}
				if a := lc.available(t); a != 400 {
					t.Fatalf("available after the refund %d, want 400", a)
				}
				var payRef string
				if err := e.Main.DB.QueryRow(context.Background(), "SELECT id FROM terminal_payments WHERE payment_intent_id = ?", in.ID).Scan(&payRef); err != nil {
					t.Fatal(err)
				}
				var at struct {
					Status           string `json:"status"`
					PaymentReference string `json:"payment_reference"`
				}
				if r := getJSON(t, s.URL+"/wallet_a/v1/refunds?reference="+re.ID, lc.apiKey, &at); r != 200 || at.Status != "succeeded" || at.PaymentReference != payRef {
					t.Fatalf("the gateway's refund: %d %+v, want of %s", r, at, payRef)
				}
				// Both deliveries of the refund's callback arrive; it settles once.
				deadline := time.Now().Add(10 * time.Second)
				for storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM provider_callbacks WHERE merchant_id = ?", lc.mid) < 1 && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				time.Sleep(300 * time.Millisecond)
				if n := storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM events WHERE object_id = ? AND type = 'refund.succeeded'", re.ID); n != 1 {
					t.Fatalf("%d refund.succeeded events", n)
				}
				// The reserve at creation and the payment back at success, each once.
				if n := storetest.Count(t, e.Main.DB, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", re.ID); n != 2 {
					t.Fatalf("%d refund ledger transactions, want 2", n)
				}
				if n := storetest.Count(t, e.Main.DB, `SELECT COUNT(*) FROM (SELECT kind FROM ledger_transactions WHERE reference = ?
					GROUP BY kind HAVING COUNT(*) > 1) d`, re.ID); n != 0 {
					t.Fatalf("%d refund ledger transactions recorded twice", n)
				}
				// More than is left: refused by payd before the gateway.
				r = lc.post(t, "/v1/refunds", map[string]any{"payment_intent": in.ID, "amount_minor": 500}, newKey())
				requireError(t, r, 400, "amount_exceeds_refundable", "amount_minor")
			})
		})

		t.Run("declined", func(t *testing.T) {
			lc := goLiveCard(t, h, s, "wallet_a", "5s")
			in := decodeIntent(t, lc.pay(t, lc.body(t, cardgateway.CardDeclined, 300), newKey()), 402)
			if in.Status != "canceled" || in.LastError == nil || in.LastError.Code != "card_declined" || in.LastError.DeclineCode != "generic_decline" {
				t.Fatalf("declined: %+v", in)
			}
			if a := lc.available(t); a != 0 {
				t.Fatalf("available %d after a decline", a)
			}
			// The 3-D Secure test card is approved at a terminal, as in the sandbox.
			if in := decodeIntent(t, lc.pay(t, lc.body(t, cardgateway.Card3DS, 200), newKey()), 201); in.Status != "succeeded" {
				t.Fatalf("3DS card: %+v", in)
			}
		})

		t.Run("another merchant's device", func(t *testing.T) {
			// Live: a device bound to merchant A answers merchant B exactly as
			// a device payd never saw does, at activation and on a read, and
			// A's terminal still takes A's read.
			owner, stranger := goLiveCard(t, h, s, "wallet_a", "5s"), goLiveCard(t, h, s, "wallet_a", "5s")
			bdk, err := dukpt.ParseKey(liveBDKTDES)
			if err != nil {
				t.Fatal(err)
			}
			neverSeenID := "dev-" + newKey()
			neverSeen, err := simulator.NewDeviceWithBDK(terminals.Countertop, neverSeenID, bdk, 1)
			if err != nil {
				t.Fatal(err)
			}
			ownersRead := owner.body(t, cardgateway.CardApproved, 300)
			activated := map[string]string{}
			for name, devID := range map[string]string{"owner's": owner.termID, "never seen": neverSeenID} {
				r := stranger.post(t, "/v1/terminals", map[string]any{"serial_number": "LIVE-" + newKey(), "model": "countertop", "outlet_id": "outlet_live"}, newKey())
				initial, err := simulator.InitialKSN(terminals.Countertop, devID)
				if err != nil {
					t.Fatal(err)
				}
				activated[name] = r.Map(t)["id"].(string)
				activated[name+" body"] = terminalBody(t, stranger.post(t, "/v1/terminals/"+activated[name]+"/activate", map[string]any{"ksn": initial.String()}, newKey()))
			}
			if activated["owner's body"] != activated["never seen body"] {
				t.Fatalf("activation with the owner's device answers %s, with a never-seen one %s", activated["owner's body"], activated["never seen body"])
			}
			unknown := errorBody(t, stranger.pay(t, h.payment(t, neverSeen, cardgateway.CardApproved, 300, readOpts{}), newKey()))
			for _, term := range []string{stranger.termID, activated["owner's"]} {
				h.requireNothingWritten(t, term, func() {
					got := errorBody(t, stranger.post(t, "/v1/terminals/"+term+"/payments", ownersRead, newKey()))
					if got != unknown {
						t.Fatalf("the owner's read on the stranger's terminal %s answers %s, a never-seen device's %s", term, got, unknown)
					}
				})
			}
			if in := decodeIntent(t, owner.pay(t, ownersRead, newKey()), 201); in.Status != "succeeded" {
				t.Fatalf("the owner's read: %+v", in)
			}
		})

		t.Run("no live card gateway connection", func(t *testing.T) {
			lc := goLiveCard(t, h, s, "bank_a", "5s")
			body := lc.body(t, cardgateway.CardApproved, 500)
			h.requireNothingWritten(t, lc.termID, func() {
				requireError(t, lc.pay(t, body, newKey()), 503, "card_gateway_unavailable", "")
			})
		})

		t.Run("timeout then reconciliation", func(t *testing.T) {
			hung := apptest.StartSim(t, sim.Config{TimeoutRate: 1, Logger: simLogger})
			lc := goLiveCard(t, h, hung, "wallet_a", "300ms")
			key := newKey()
			body := lc.body(t, cardgateway.CardApproved, 900)
			r := lc.pay(t, body, key)
			requireError(t, r, 504, "provider_timeout", "")
			// Reconciliation asks the gateway by reference and records the approval.
			payID := waitSettled(t, h, lc.termID, "succeeded")
			if n := hung.CardAuthorizations(lc.apiKey); n != 1 {
				t.Fatalf("%d authorisations at the gateway", n)
			}
			// The POS's retry gets the recorded outcome; nothing is authorised again.
			in := decodeIntent(t, lc.pay(t, body, key), 201)
			if in.Status != "succeeded" || in.AmountCapturedMinor != 900 {
				t.Fatalf("retry after reconciliation: %+v", in)
			}
			if n := hung.CardAuthorizations(lc.apiKey); n != 1 {
				t.Fatalf("%d authorisations after the retry", n)
			}
			var linked string
			if err := e.Main.DB.QueryRow(context.Background(), "SELECT payment_intent_id FROM terminal_payments WHERE id = ?", payID).Scan(&linked); err != nil || linked != in.ID {
				t.Fatalf("terminal payment %s linked to %q (%v), want %s", payID, linked, err, in.ID)
			}
			lc.once(t, in.ID)
			if a := lc.available(t); a != 900 {
				t.Fatalf("available %d, want 900", a)
			}
		})

		t.Run("timeout then retry and reconciliations at once", func(t *testing.T) {
			hung := apptest.StartSim(t, sim.Config{TimeoutRate: 1, Logger: simLogger})
			// A second, not 300 ms: the retry and the four reconciliations
			// race each other for the gateway's answers, and on a loaded
			// machine one of them took longer than 300 ms to be answered.
			lc := goLiveCard(t, h, hung, "wallet_a", "1s")
			key := newKey()
			body := lc.body(t, cardgateway.CardApproved, 650)
			requireError(t, lc.pay(t, body, key), 504, "provider_timeout", "")
			var payID string
			if err := e.Main.DB.QueryRow(context.Background(), "SELECT id FROM terminal_payments WHERE terminal_id = ?", lc.termID).Scan(&payID); err != nil {
				t.Fatal(err)
			}
			// The POS's retry (resumed: the gateway replays its answer under
			// the same key) races four reconciliations of the payment and
			// the reconciliation job.
			var wg sync.WaitGroup
			var retry *apptest.Response
			wg.Add(5)
			go func() { defer wg.Done(); retry = lc.pay(t, body, key) }()
			for i := 0; i < 4; i++ {
				go func() {
					defer wg.Done()
					if _, err := h.svc.ReconcileAuthorization(context.Background(), payID); err != nil {
						t.Errorf("reconcile: %v", err)
					}
				}()
			}
			wg.Wait()
			in := decodeIntent(t, retry, 201)
			if in.Status != "succeeded" {
				t.Fatalf("retry: %+v", in)
			}
			if st, err := h.svc.ReconcileAuthorization(context.Background(), payID); err != nil || st != "succeeded" {
				t.Fatalf("reconcile once more: %s %v", st, err)
			}
			if n := hung.CardAuthorizations(lc.apiKey); n != 1 {
				t.Fatalf("%d authorisations at the gateway", n)
			}
			lc.once(t, in.ID)
			if a := lc.available(t); a != 650 {
				t.Fatalf("available %d, want 650", a)
			}
		})

		t.Run("gateway never received it", func(t *testing.T) {
			failing := apptest.StartSim(t, sim.Config{ErrorRate: 1, Logger: simLogger})
			lc := goLiveCard(t, h, failing, "wallet_a", "1s")
			key := newKey()
			body := lc.body(t, cardgateway.CardApproved, 400)
			requireError(t, lc.pay(t, body, key), 502, "provider_error", "")
			failing.SetFaults(0, 0)
			// The request has answered, so nothing will send the card any
			// more: reconciliation finds no record at the gateway and
			// records that nothing was authorised.
			waitSettled(t, h, lc.termID, "canceled")
			in := decodeIntent(t, lc.pay(t, body, key), 402)
			if in.Status != "canceled" || in.LastError == nil || in.LastError.DeclineCode != terminals.DeclineNotReceived {
				t.Fatalf("a late retry: %+v", in)
			}
			if n := failing.CardAuthorizations(lc.apiKey); n != 0 {
				t.Fatalf("%d authorisations at the gateway", n)
			}
			if a := lc.available(t); a != 0 {
				t.Fatalf("available %d", a)
			}
		})

		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
		t.Run("no card data anywhere", func(t *testing.T) {
			for _, line := range strings.Split(simLogs.String(), "\n") {
				if s, ok := h.find(line, nil); ok {
					t.Errorf("card data %.6s… in a simulator log line: %.300s", s, line)
				}
			}
			h.scanForCardData(t, 40, 30)
		})
	}, func(c *app.Config) {
		c.P2PEKeys = keys
		c.ReconcileInterval = 100 * time.Millisecond
	})
}

// waitSettled waits until the terminal's only payment is no longer
// authorizing, checks it is want, and returns its id.
func waitSettled(t *testing.T, h *harness, termID, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var id, status string
		if err := h.e.Main.DB.QueryRow(context.Background(), "SELECT id, status FROM terminal_payments WHERE terminal_id = ?", termID).Scan(&id, &status); err != nil {
			t.Fatal(err)
		}
		if status != "authorizing" {
			if status != want {
				t.Fatalf("terminal payment %s reconciled as %s, want %s", id, status, want)
			}
			return id
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminal payment %s still authorizing", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getJSON GETs url with the API key into v and returns the status.
func getJSON(t *testing.T, url, apiKey string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(v)
	return resp.StatusCode
}
