package payments

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/payd/payd/internal/providers/sandbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// encodingJSON is how the API encoded an intent before AppendJSON: a
// json.Encoder with HTML escaping off, without its trailing newline.
func encodingJSON(t *testing.T, in Intent) []byte {
	t.Helper()
	type plain Intent // without the method
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(in)); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

func TestIntentAppendJSONMatchesEncodingJSON(t *testing.T) {
	// Every exported field of Intent is written by AppendJSON: one that is
	// not listed here was added after it and must be added to both.
	var names []string
	for f := range reflect.TypeFor[Intent]().Fields() {
		if tag := f.Tag.Get("json"); tag != "-" {
			names = append(names, f.Name)
		}
	}
	if len(names) != 24 {
		t.Fatalf("Intent has %d encoded fields, AppendJSON writes 24: add the new ones to AppendJSON and this test (%v)", len(names), names)
	}
	strs := []string{"", "plain", `q"uote`, `back\slash`, "<html>&amp;", "new\nline\ttab\r", "\x00\x1f\x7f", "é日本", "\u2028\u2029",
		"bad\xffutf8", "+25377000001", "https://example.com/return?a=1&b=2"}
	at := time.Date(2026, 11, 29, 1, 5, 6, 0, time.UTC)
	pick := func(r *rand.Rand) string { return strs[r.IntN(len(strs))] }
	ptr := func(r *rand.Rand) *string {
		if r.IntN(3) == 0 {
			return nil
		}
		s := pick(r)
		return &s
	}
	tptr := func(r *rand.Rand) *time.Time {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			u := at.Add(1500 * time.Millisecond).In(time.FixedZone("EAT", 3*3600))
			return &u
		}
		u := at.Add(time.Duration(r.IntN(1e6)) * time.Second)
		return &u
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		in := Intent{ID: pick(r), Object: "payment_intent", Status: Status(pick(r)), AmountMinor: r.Int64() - r.Int64(),
			AmountCapturedMinor: int64(r.IntN(1000)), AmountCapturableMinor: int64(r.IntN(3)), CaptureMethod: pick(r),
			AmountRefundedMinor: int64(r.IntN(2)), Refunded: r.IntN(2) == 0, Disputed: r.IntN(2) == 0, Currency: pick(r), Provider: pick(r),
			CustomerMSISDN: ptr(r), Description: ptr(r), ReturnURL: ptr(r), Livemode: r.IntN(2) == 0, CreatedAt: *tptrNonNil(r, tptr),
			SucceededAt: tptr(r), CanceledAt: tptr(r), CancellationReason: ptr(r), MerchantID: "acct_x", InvoiceID: "in_x"}
		switch r.IntN(3) {
		case 0:
			in.Metadata = nil
		case 1:
			in.Metadata = map[string]string{}
		default:
			in.Metadata = map[string]string{}
			for range 1 + r.IntN(4) {
				in.Metadata[pick(r)] = pick(r)
			}
		}
		if r.IntN(2) == 0 {
			in.NextAction = &NextAction{Type: pick(r), OTPLength: r.IntN(2) * 6, RedirectURL: []string{"", pick(r)}[r.IntN(2)]}
		}
		if r.IntN(2) == 0 {
			in.LastError = &LastError{Code: pick(r), Message: pick(r), Provider: pick(r), DeclineCode: []string{"", pick(r)}[r.IntN(2)]}
		}
		switch r.IntN(3) {
		case 0:
			raw := json.RawMessage(`{ "card" : { "brand":"visa", "last4" : "4242", "note":"<b>&" } }`)
			in.PaymentMethodDetails = &raw
		case 1:
			raw := json.RawMessage(`{"type":"wallet"}`)
			in.PaymentMethodDetails = &raw
		}
		got, err := in.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := encodingJSON(t, in); !bytes.Equal(got, want) {
			t.Fatalf("intent %d:\n got %s\nwant %s", i, got, want)
		}
	}
	// Refused as encoding/json refuses it.
	bad := json.RawMessage(`{not json`)
	if _, err := (Intent{PaymentMethodDetails: &bad}).AppendJSON(nil); err == nil {
		t.Fatal("invalid payment_method_details accepted")
	}
}

func tptrNonNil(r *rand.Rand, f func(*rand.Rand) *time.Time) *time.Time {
	for {
		if t := f(r); t != nil {
			return t
		}
	}
}

// decodeNextAction reads what encoding/json reads, whatever the stored text.
func TestDecodeNextActionMatchesEncodingJSON(t *testing.T) {
	var inputs []string
	for _, a := range []NextAction{{Type: "collect_otp", OTPLength: 6}, {Type: "redirect", RedirectURL: "https://pay.example/p/1?x=1&y=<2>"},
		{Type: "push_approval"}, {Type: "redirect_to_url", OTPLength: 4, RedirectURL: "http://x"}, {Type: `q"uote`}, {Type: "é"}, {}} {
		b, _ := json.Marshal(a)
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs, `{"type":"collect_otp","otp_length":06}`, `{"type":"a","otp_length":0}`, `{"type":"a","redirect_url":""}`,
		`{"type":"a","otp_length":99999999999999999999}`, `{"Type":"upper"}`, `{ "type":"spaced" }`, `{"type":"a","extra":1}`,
		`{"type":"a"} `, `{"type":"a\u0041"}`, `{"type":"a","otp_length":-1}`, `null`, `{`, `{"type":"a","otp_length":1.5}`,
		`{"type":"a","otp_length":123456789}`, `{"type":"a","otp_length":1234567890}`)
	for _, s := range inputs {
		var want NextAction
		wantErr := json.Unmarshal([]byte(s), &want)
		var got NextAction
		gotErr := decodeNextAction(s, &got)
		if (wantErr == nil) != (gotErr == nil) || (wantErr == nil && got != want) {
			t.Errorf("%s: got %+v, %v; encoding/json %+v, %v", s, got, gotErr, want, wantErr)
		}
	}
}

// Get reads fewer columns than load (loadView), and must answer the very
// Intent load's view does, unexported-to-JSON fields (MerchantID,
// InvoiceID) included: the hosted invoice page matches an intent to its
// invoice by InvoiceID.
func TestGetAnswersWhatLoadViews(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		e.reg.UseSandboxPayments(sandbox.New(sandbox.Config{PublicURL: "http://127.0.0.1"}))
		ctx := t.Context()
		pi, err := e.svc.Create(ctx, store.NoClaim, e.test, CreateParams{Amount: ptr[int64](1500), Currency: "DJF", Provider: "bank_a",
			CustomerMSISDN: ptr("+25377123456"), Description: ptr("d"), Metadata: map[string]string{"k": "v"}})
		if err != nil {
			t.Fatal(err)
		}
		// Every column the view shows set, with non-default values.
		if _, err := db.Exec(ctx, `UPDATE payment_intents SET invoice_id = 'in_1', clock_created_at = 1700000000000000, succeeded_at = 1700000001500000,
			canceled_at = 1700000002000000, cancellation_reason = 'duplicate', last_error = '{"code":"c","message":"m","provider":"bank_a"}',
			payment_method_details = '{"type":"wallet"}', return_url = 'https://r', amount_capturable_minor = 3, capture_method = 'manual',
			disputed = ?, amount_refunded_minor = 2 WHERE id = ?`, true, pi.ID); err != nil {
			t.Fatal(err)
		}
		r, err := load(ctx, db, e.test.MerchantID, false, pi.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.svc.Get(ctx, e.test, pi.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := r.view(); !reflect.DeepEqual(got, want) {
			t.Fatalf("Get:\n%+v\nload's view:\n%+v", got, want)
		}
		if got.InvoiceID != "in_1" || got.MerchantID != e.test.MerchantID {
			t.Fatalf("invoice %q merchant %q", got.InvoiceID, got.MerchantID)
		}
		// Another mode, another merchant: not found.
		if _, err := e.svc.Get(ctx, e.live, pi.ID); err == nil {
			t.Fatal("a test intent read in live mode")
		}
		other := e.test
		other.MerchantID = "acct_other"
		if _, err := e.svc.Get(ctx, other, pi.ID); err == nil {
			t.Fatal("an intent read by another merchant")
		}
	})
}
