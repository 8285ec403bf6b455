package docsamples

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/client"
	"github.com/payd/payd/internal/apidocs"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/simulator"
	"github.com/payd/payd/internal/testutil"
)

// A planned sample is an operation's samples written for one server, with
// the objects it names made beforehand through the API, and the key it runs
// with.
type planned struct {
	apidocs.Samples
	Key string
}

// fixtures make, through the API of a running payd, the objects samples
// name: each operation gets objects of its own, in the state its sample
// needs, so a sample's outcome depends on no other sample.
type fixtures struct {
	t    testing.TB
	e    *apptest.Env
	n    int
	bank struct {
		debtorKey, creditorKey string
	}
	shared map[string]string
}

// prepare is the preparation of the operations whose samples need more than
// a fresh object of each id they name: it returns the values to write in
// place of the document's examples, and the key to run with ("" for the
// merchant's test secret key).
var prepare = map[string]func(f *fixtures) (map[string]string, string){
	"createRefund":         func(f *fixtures) (map[string]string, string) { return exID("pi", f.succeeded(15000)), "" },
	"createSandboxDispute": func(f *fixtures) (map[string]string, string) { return exID("pi", f.card(4500)), "" },
	"capturePaymentIntent": func(f *fixtures) (map[string]string, string) { return exID("pi", f.heldCard()), "" },
	"approveRefund":        func(f *fixtures) (map[string]string, string) { return exID("re", f.refundAwaitingApproval()), "" },
	"cancelRefund":         func(f *fixtures) (map[string]string, string) { return exID("re", f.refundAwaitingApproval()), "" },
	"approvePayout":        func(f *fixtures) (map[string]string, string) { return exID("po", f.payoutAwaitingApproval()), "" },
	"retryPayout":          func(f *fixtures) (map[string]string, string) { return exID("po", f.failedPayout()), "" },
	"reviewPayout":         func(f *fixtures) (map[string]string, string) { return exID("po", f.heldPayout()), "" },
	// The settlement reconciliation compares a live provider's report: the
	// sample runs with a live key of a merchant connected to the provider
	// simulator.
	"getSettlementReconciliation": func(f *fixtures) (map[string]string, string) { return nil, f.liveKey() },
	"voidInvoice":                 func(f *fixtures) (map[string]string, string) { return exID("in", f.openInvoice()), "" },
	"payInvoice":                  func(f *fixtures) (map[string]string, string) { return exID("in", f.openInvoice()), "" },
	"markInvoiceUncollectible": func(f *fixtures) (map[string]string, string) {
		return exID("in", f.openInvoice()), ""
	},
	"getSettingsChange":     func(f *fixtures) (map[string]string, string) { return exID("setchg", f.settingsChange()), "" },
	"approveSettingsChange": func(f *fixtures) (map[string]string, string) { return exID("setchg", f.settingsChange()), "" },
	"createTerminalPayment": func(f *fixtures) (map[string]string, string) { return f.terminalPayment(), "" },
	// Bank transfers: the runner's participant banks are the example's
	// debtor and creditor agents. createTransfer sends the example's
	// transfer; the others name one made beforehand.
	"createTransfer": func(f *fixtures) (map[string]string, string) { return nil, f.banks().bank.debtorKey },
	"listTransfers":  func(f *fixtures) (map[string]string, string) { return nil, f.banks().bank.debtorKey },
	"getTransfer":    func(f *fixtures) (map[string]string, string) { return exUETR(f.transfer()), f.banks().bank.debtorKey },
	"cancelTransfer": func(f *fixtures) (map[string]string, string) { return exUETR(f.transfer()), f.banks().bank.debtorKey },
	"returnTransfer": func(f *fixtures) (map[string]string, string) { return exUETR(f.transfer()), f.banks().bank.creditorKey },
	"reviewTransfer": func(f *fixtures) (map[string]string, string) {
		return exUETR(f.heldTransfer()), f.banks().bank.creditorKey
	},
	// A live provider's callback: the merchant, connected to wallet_a, and
	// a live wallet_a intent of the example's amount that the callback
	// reports paid. Its Provider-Signature differs by language (signed).
	"receiveProviderCallback": func(f *fixtures) (map[string]string, string) {
		return map[string]string{"mer_" + exampleULID: f.e.Merchant.MerchantID, "pi_" + exampleULID: f.liveIntent(15000)}, ""
	},
}

// signed is the preparation of the operations whose samples carry a value
// computed over the bytes each language posts: it returns, for one
// language's body, the values to write in place of the document's examples
// in that language's sample.
var signed = map[string]func(f *fixtures, body []byte) map[string]string{
	// The Provider-Signature of each sample is the provider's, made with
	// the merchant's callback secret over the body that language's sample
	// posts. Its time is put a few minutes ahead of the preparation, so the
	// signature verifies (within protocol.Tolerance) from a minute before
	// it to nine minutes after: the samples run minutes after they are
	// prepared, the Go ones after a build.
	"receiveProviderCallback": func(f *fixtures, body []byte) map[string]string {
		at := time.Now().Add(protocol.Tolerance - time.Minute)
		return map[string]string{exampleSignature: protocol.Sign(liveCallbackSecret, at, exampleEventID, body)}
	},
}

// The document's example callback: its event id and signature.
const (
	exampleEventID   = "wa_evt_7731"
	exampleSignature = "t=1795000000,v1=5f0c6e0a2b7d4c1e9a8f3b2d6c4e1a0f9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e"
)

// liveCallbackSecret is wallet_a's callback secret for the merchant
// liveKey connects (apptest.GoLive's own for wallet_a).
const liveCallbackSecret = "cbsec_wallet_a_0123456789abcdef"

// postedBody is the request body lang's sample of s posts, byte for byte:
// curl posts the document's indented JSON as written; the TypeScript and
// Python SDKs post it compact in the order written (JSON.stringify, and
// json.dumps with separators (",", ":")); the Go client posts
// json.Marshal of the request type the sample decodes it into.
func postedBody(t testing.TB, lang string, s apidocs.Samples) []byte {
	t.Helper()
	curl := s.Code["curl"]
	i := strings.Index(curl, "-d '")
	if i < 0 || !strings.HasSuffix(curl, "'") {
		t.Fatalf("%s: no body in the curl sample:\n%s", s.OperationID, curl)
	}
	written := []byte(strings.ReplaceAll(curl[i+len("-d '"):len(curl)-1], `'\''`, "'"))
	switch lang {
	case "curl":
		return written
	case "TypeScript", "Python":
		var b bytes.Buffer
		if err := json.Compact(&b, written); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	case "Go":
		var ev client.ProviderEvent
		if err := json.Unmarshal(written, &ev); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("%s: no body known for %s", s.OperationID, lang)
	return nil
}

// The document's example id of every object, and the example UETR.
const (
	exampleULID = "01JQ3ZK8WQ5N2C7R4T6V8X0Y2A"
	exampleUETR = "8a562c67-ca16-48ba-b074-65581be6f011"
)

func exID(prefix, id string) map[string]string {
	return map[string]string{prefix + "_" + exampleULID: id}
}
func exUETR(uetr string) map[string]string { return map[string]string{exampleUETR: uetr} }

// plan prepares every operation and writes its samples for e, in the order
// they are run.
func plan(t testing.TB, e *apptest.Env, set *apidocs.SampleSet) []planned {
	began := time.Now()
	defer func() { t.Logf("the samples' objects made in %v", time.Since(began).Round(time.Millisecond)) }()
	f := &fixtures{t: t, e: e, shared: map[string]string{}}
	f.setup()
	var out []planned
	for i, base := range order(set.Operations(apidocs.SampleValues{})) {
		values := map[string]string{}
		key := ""
		if p := prepare[base.OperationID]; p != nil {
			values, key = p(f)
			if values == nil {
				values = map[string]string{}
			}
		}
		sub := func(example string) string {
			if v, ok := values[example]; ok {
				return v
			}
			v := example
			if m := idLike.FindStringSubmatch(example); m != nil {
				v = f.fresh(base.OperationID, m[1])
			}
			values[example] = v
			return v
		}
		sv := apidocs.SampleValues{BaseURL: e.URL, Substitute: sub, IdempotencyKey: fmt.Sprintf("docs-%s-%d", base.OperationID, i)}
		s, _ := set.Operation(base.OperationID, sv)
		if sign := signed[base.OperationID]; sign != nil {
			for _, lang := range apidocs.Languages {
				extra := sign(f, postedBody(t, lang, s))
				own := sv
				own.Substitute = func(example string) string {
					if v, ok := extra[example]; ok {
						return v
					}
					return sub(example)
				}
				in, _ := set.Operation(base.OperationID, own)
				s.Code[lang] = in.Code[lang]
			}
		}
		if key == "" {
			key = e.SK
		}
		out = append(out, planned{Samples: s, Key: key})
	}
	return out
}

// setup funds the merchant and sets an approval threshold (a tightening,
// applied at once), so that objects over it wait for another principal.
func (f *fixtures) setup() {
	f.post(f.e.SK, "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 100_000_000}, 201)
	f.post(f.e.SK, "/v1/settings", map[string]any{"approval_threshold_minor": 100_000}, 200)
}

// fresh makes a new object for an example id of the given prefix.
func (f *fixtures) fresh(op, prefix string) string {
	switch prefix {
	case "pi":
		return f.intent()
	case "we":
		return f.id(f.post(f.e.SK, "/v1/webhook_endpoints", map[string]any{"url": "https://shop.example.dj/payd/webhooks", "enabled_events": []string{"*"}}, 201))
	case "evt":
		f.intent()
		return f.first("/v1/events?limit=1")
	case "txn":
		return f.first("/v1/balance_transactions?limit=1")
	case "po":
		return f.id(f.post(f.e.SK, "/v1/payouts", f.payoutBody(25000), 201))
	case "batch":
		return f.batch()
	case "re":
		return f.id(f.post(f.e.SK, "/v1/refunds", map[string]any{"payment_intent": f.succeeded(15000), "amount_minor": 5000}, 201))
	case "dp":
		return f.id(f.post(f.e.SK, "/v1/sandbox/disputes", map[string]any{"payment_intent": f.card(4500), "reason": "product_not_received"}, 201))
	case "cus":
		return f.customer()
	case "sub":
		return f.id(f.post(f.e.SK, "/v1/subscriptions", map[string]any{"customer": f.customer(), "currency": "DJF", "interval": "month",
			"items": []any{map[string]any{"description": "Fibre 100", "amount_minor": 9000}}}, 201))
	case "in":
		return f.invoice()
	case "clock":
		return f.id(f.post(f.e.SK, "/v1/test_helpers/test_clocks", map[string]any{"frozen_time": 1795000000}, 201))
	case "term":
		return f.terminal()
	case "setchg":
		return f.settingsChange()
	}
	f.t.Errorf("%s: no fixture makes a %s_ object", op, prefix)
	return prefix + "_" + exampleULID
}

func (f *fixtures) key() string {
	f.n++
	return fmt.Sprintf("docs-fixture-%d", f.n)
}

// post sends a request and fails the test unless it answers want.
func (f *fixtures) post(key, path string, body any, want int, headers ...string) map[string]any {
	f.t.Helper()
	h := map[string]string{"Idempotency-Key": f.key()}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	r := f.e.Do(apptest.Request{Method: "POST", Path: path, Key: key, Body: body, Headers: h})
	if r.Status != want {
		f.t.Fatalf("preparation: POST %s answered %d (want %d): %.300s", path, r.Status, want, r.Body)
	}
	return r.Map(f.t)
}

func (f *fixtures) id(m map[string]any) string {
	f.t.Helper()
	id, _ := m["id"].(string)
	if id == "" {
		f.t.Fatalf("preparation: an answer without an id: %v", m)
	}
	return id
}

// first is the id of the first item a list answers.
func (f *fixtures) first(path string) string {
	f.t.Helper()
	r := f.e.Get(path)
	var list struct{ Data []struct{ ID string } }
	r.JSON(f.t, &list)
	if r.Status != 200 || len(list.Data) == 0 {
		f.t.Fatalf("preparation: GET %s answered %d with no item: %.300s", path, r.Status, r.Body)
	}
	return list.Data[0].ID
}

// intent is a new bank_a payment intent waiting for its OTP.
func (f *fixtures) intent() string {
	return f.intentOf(15000)
}

func (f *fixtures) intentOf(amount int64) string {
	return f.id(f.post(f.e.SK, "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "bank_a",
		"customer_msisdn": "+25377123456", "description": "Order 1042"}, 201))
}

// liveIntent is a new live wallet_a payment intent of amount, made with
// liveKey at the provider simulator.
func (f *fixtures) liveIntent(amount int64) string {
	return f.id(f.post(f.liveKey(), "/v1/payment_intents", map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "wallet_a",
		"customer_msisdn": "+25377654321", "description": "Order 1042"}, 201))
}

// succeeded is a new succeeded payment intent of amount.
func (f *fixtures) succeeded(amount int64) string {
	id := f.intentOf(amount)
	f.post(f.e.SK, "/v1/payment_intents/"+id+"/confirm", map[string]any{"otp": "123456"}, 200)
	return id
}

// refundAwaitingApproval is a refund over the threshold asked for by the
// merchant's second key, so the first may approve or cancel it.
func (f *fixtures) refundAwaitingApproval() string {
	pi := f.succeeded(200_000)
	m := f.post(f.e.SK2, "/v1/refunds", map[string]any{"payment_intent": pi, "amount_minor": 150_000}, 201)
	if m["status"] != "requires_approval" {
		f.t.Fatalf("preparation: the refund over the threshold is %v", m["status"])
	}
	return f.id(m)
}

func (f *fixtures) payoutBody(amount int64) map[string]any {
	return map[string]any{"amount_minor": amount, "currency": "DJF", "provider": "wallet_a", "recipient_msisdn": "+25377654321",
		"recipient_name": "Amina Hassan", "reference": f.key()}
}

// payoutAwaitingApproval is a payout over the threshold made with the
// merchant's second key.
func (f *fixtures) payoutAwaitingApproval() string {
	m := f.post(f.e.SK2, "/v1/payouts", f.payoutBody(150_000), 201)
	if m["status"] != "requires_approval" {
		f.t.Fatalf("preparation: the payout over the threshold is %v", m["status"])
	}
	return f.id(m)
}

// failedPayout is a payout its rail refused.
func (f *fixtures) failedPayout() string {
	m := f.post(f.e.SK, "/v1/payouts", f.payoutBody(1000), 201, "X-Service-Scenario", "insufficient_funds")
	if m["status"] != "failed" {
		f.t.Fatalf("preparation: the refused payout is %v", m["status"])
	}
	return f.id(m)
}

// heldPayout is a payout its rail holds for compliance (the sandbox's
// kyc_blocked), made with the merchant's second key: its review releases it
// to be sent, which the principal that made it may not do.
func (f *fixtures) heldPayout() string {
	m := f.post(f.e.SK2, "/v1/payouts", f.payoutBody(1000), 201, "X-Service-Scenario", "kyc_blocked")
	if m["status"] != "held" {
		f.t.Fatalf("preparation: the payout held for compliance is %v", m["status"])
	}
	return f.id(m)
}

// liveKey is a live secret key of the merchant, connected to wallet_a at
// the provider simulator (once).
func (f *fixtures) liveKey() string {
	if k, ok := f.shared["live"]; ok {
		return k
	}
	k := f.e.GoLive(apptest.StartSim(f.t, sim.Config{}), apptest.LiveConnection{}, "wallet_a")
	f.shared["live"] = k
	return k
}

// batch is a variant B batch (batch_ ids) waiting for approval, made with
// the merchant's second key.
func (f *fixtures) batch() string {
	return f.id(f.post(f.e.SK2, "/v1/payouts/bulk", map[string]any{"currency": "DJF", "description": "November commissions",
		"rows": []any{map[string]any{"recipient_msisdn": "+25377654321", "amount_minor": 2500, "provider": "wallet_a", "reference": "comm-0042"}}}, 201))
}

func (f *fixtures) customer() string {
	return f.id(f.post(f.e.SK, "/v1/customers", map[string]any{"name": "Amina Hassan", "email": "amina@example.dj",
		"default_payment": map[string]any{"provider": "wallet_a", "customer_msisdn": "+25377654321"}}, 201))
}

// invoice is a draft invoice.
func (f *fixtures) invoice() string {
	return f.id(f.post(f.e.SK, "/v1/invoices", map[string]any{"customer": f.customer(), "currency": "DJF",
		"lines":             []any{map[string]any{"description": "Installation", "amount_minor": 20000, "quantity": 1}},
		"collection_method": "send_invoice", "days_until_due": 14}, 201))
}

// openInvoice is a finalized invoice.
func (f *fixtures) openInvoice() string {
	id := f.invoice()
	f.post(f.e.SK, "/v1/invoices/"+id+"/finalize", nil, 200)
	return id
}

// settingsChange is a loosening asked for by the merchant's second key:
// a pending change the first may read and approve (one, shared).
func (f *fixtures) settingsChange() string {
	if id, ok := f.shared["setchg"]; ok {
		return id
	}
	id := f.id(f.post(f.e.SK2, "/v1/settings", map[string]any{"approval_threshold_minor": 900_000}, 202))
	f.shared["setchg"] = id
	return id
}

func (f *fixtures) terminal() string {
	return f.id(f.post(f.e.SK, "/v1/terminals", map[string]any{"serial_number": "DOCS-" + f.key(), "model": "countertop"}, 201))
}

// activeTerminal is an activated terminal and its simulated device.
func (f *fixtures) activeTerminal() (string, *simulator.Device) {
	id := f.terminal()
	f.post(f.e.SK, "/v1/terminals/"+id+"/activate", map[string]any{}, 200)
	dev, err := simulator.NewDevice(terminals.Model("countertop"), id, 1)
	if err != nil {
		f.t.Fatal(err)
	}
	return id, dev
}

// chipRead is the encrypted chip read of a test card for amount DJF.
func (f *fixtures) chipRead(dev *simulator.Device, amount int64) (ksn, payload string) {
	read, err := simulator.ChipRead(simulator.Payment{PAN: "4242424242424242", AmountMinor: amount})
	if err != nil {
		f.t.Fatal(err)
	}
	ksn, payload, err = dev.Encrypt(read)
	if err != nil {
		f.t.Fatal(err)
	}
	return ksn, payload
}

// terminalPayment supplies the example's terminal payment: an active
// terminal and the example's amount read from a card and encrypted as the
// terminal's device does, in place of the example's KSN and payload.
func (f *fixtures) terminalPayment() map[string]string {
	id, dev := f.activeTerminal()
	ksn, payload := f.chipRead(dev, 4500)
	return map[string]string{"term_" + exampleULID: id, "FFFF9876543210E00001": ksn, "8A4F1C2B9D7E6F5A4B3C2D1E0F9A8B7C": payload}
}

// card is a succeeded card payment taken at a terminal.
func (f *fixtures) card(amount int64) string {
	id, dev := f.activeTerminal()
	ksn, payload := f.chipRead(dev, amount)
	m := f.post(f.e.SK, "/v1/terminals/"+id+"/payments", map[string]any{"amount_minor": amount, "currency": "DJF", "ksn": ksn,
		"encrypted_payload": payload}, 201)
	if m["status"] != "succeeded" {
		f.t.Fatalf("preparation: the card payment is %v", m["status"])
	}
	return f.id(m)
}

// heldCard is a card payment taken at a terminal with capture_method
// manual: requires_capture.
func (f *fixtures) heldCard() string {
	id, dev := f.activeTerminal()
	ksn, payload := f.chipRead(dev, 1000)
	m := f.post(f.e.SK, "/v1/terminals/"+id+"/payments", map[string]any{"amount_minor": 1000, "currency": "DJF", "ksn": ksn,
		"encrypted_payload": payload, "capture_method": "manual"}, 201)
	if m["status"] != "requires_capture" {
		f.t.Fatalf("preparation: the manual card payment is %v", m["status"])
	}
	return f.id(m)
}

// banks makes the example's two participant banks (once): the debtor agent
// BANKDJD1XXX, funded, and the creditor agent CRDTDJD1XXX.
func (f *fixtures) banks() *fixtures {
	if f.bank.debtorKey != "" {
		return f
	}
	debtor := f.e.NewMerchant(merchants.CreateParams{Name: "Banque de Djibouti (docs)", BIC: "BANKDJD1XXX"})
	creditor := f.e.NewMerchant(merchants.CreateParams{Name: "Crédit Djiboutien (docs)", BIC: "CRDTDJD1XXX"})
	f.bank.debtorKey, f.bank.creditorKey = debtor.SecretKeys[0], creditor.SecretKeys[0]
	f.post(f.bank.debtorKey, "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 100_000_000}, 201)
	f.post(f.bank.creditorKey, "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 100_000_000}, 201)
	return f
}

// transfer is a settled transfer between the example's banks, under a
// UETR of its own.
func (f *fixtures) transfer() string {
	return f.transferTo("Port Logistics SARL", "ACSC", 200)
}

// heldTransfer is a transfer held for review: its creditor's name is on
// the sanctions list the runner's payd screens with.
func (f *fixtures) heldTransfer() string {
	return f.transferTo(listedName, "ACWP", 202)
}

func (f *fixtures) transferTo(creditor, want string, status int) string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	uetr := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	ref := strings.ToUpper(h[:12])
	m := f.post(f.banks().bank.debtorKey, "/banking/v1/transfers", map[string]any{
		"msg_id": "DOCS" + ref, "created_at": time.Now().UTC().Format(time.RFC3339),
		"settlement": map[string]any{"method": "CLRG"},
		"transactions": []any{map[string]any{"uetr": uetr, "end_to_end_id": "E2E" + ref, "amount_minor": 750000, "currency": "DJF",
			"charge_bearer": "SLEV", "debtor": map[string]any{"name": "Société Générale de Travaux", "account": "DJ2100010000000154000100186"},
			"debtor_agent": "BANKDJD1XXX", "creditor": map[string]any{"name": creditor, "account": "DJ1500020000000254000100175"},
			"creditor_agent": "CRDTDJD1XXX"}},
	}, status)
	if !strings.Contains(fmt.Sprint(m), want) {
		f.t.Fatalf("preparation: the transfer to %s is not %s: %v", creditor, want, m)
	}
	return uetr
}

// listedName is on the small OFAC list of testdata (sanctions/ofac_fixture_small).
const listedName = "Elvis Angus Logan Morey"

// withSanctionsList screens with the small OFAC list of testdata.
func withSanctionsList(t testing.TB) apptest.Option {
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	return func(c *app.Config) { c.SanctionsList = list }
}
