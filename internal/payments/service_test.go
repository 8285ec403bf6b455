package payments

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/statemachine/statemachinetest"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func TestTransitionTable(t *testing.T) {
	for _, s := range []Status{Succeeded, Canceled} {
		for _, to := range []Status{RequiresAction, Processing, Succeeded, Canceled, ComplianceReview, RequiresCapture} {
			if machine.Allowed(s, to) {
				t.Errorf("%s is terminal but the table moves it to %s", s, to)
			}
		}
	}
	for _, c := range []struct {
		from, to Status
		ok       bool
	}{
		{RequiresAction, Succeeded, true}, {RequiresAction, Processing, true}, {Processing, Succeeded, true},
		{Processing, Canceled, true}, {RequiresAction, ComplianceReview, true}, {ComplianceReview, Succeeded, false},
		{Processing, Processing, false},
		{RequiresAction, RequiresCapture, true}, {RequiresCapture, Succeeded, true}, {RequiresCapture, Canceled, true},
		{RequiresCapture, RequiresAction, false}, {RequiresCapture, Processing, false}, {ComplianceReview, Canceled, false},
	} {
		if machine.Allowed(c.from, c.to) != c.ok {
			t.Errorf("%s → %s allowed=%v", c.from, c.to, !c.ok)
		}
	}
	for _, tr := range machine.Moves {
		if (tr.To == Succeeded) != (tr.Event() == EventSucceeded) || (tr.To == Canceled) != (tr.Event() == EventCanceled) {
			t.Errorf("transition %s to %s emits %q", tr.Name, tr.To, tr.Event())
		}
	}
	for _, s := range []Status{RequiresAction, Processing, Succeeded, Canceled, ComplianceReview, RequiresCapture} {
		if !slices.Contains(machine.States(), s) {
			t.Errorf("the table does not name %s", s)
		}
	}
	statemachinetest.Check(t, &machine, "payment_intents")
}

// env is a service over a fresh database with one merchant.
type env struct {
	db   *store.DB
	svc  *Service
	reg  *providers.Registry
	test auth.Principal
	live auth.Principal
}

func newEnv(t *testing.T, db *store.DB) *env { return newEnvTB(t, db) }

func newEnvTB(t testing.TB, db *store.DB) *env {
	t.Helper()
	box, _ := secretbox.New("")
	m, err := merchants.NewService(db, box).Create(context.Background(), merchants.CreateParams{Name: "Unit"})
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	return &env{db: db, reg: reg, svc: NewService(Config{DB: db, Providers: reg}),
		test: auth.Principal{ID: "key_test", MerchantID: m.MerchantID, Kind: auth.KindSecret},
		live: auth.Principal{ID: "key_live", MerchantID: m.MerchantID, Livemode: true, Kind: auth.KindSecret}}
}

func ptr[T any](v T) *T { return &v }

// fakeRemote is a live-like adapter: remote, counting calls.
type fakeRemote struct {
	initiate func(providers.Payment) (providers.Result, error)
	confirms atomic.Int32
	delay    time.Duration
}

func (f *fakeRemote) Remote() bool { return true }
func (f *fakeRemote) Initiate(_ context.Context, p providers.Payment) (providers.Result, error) {
	return f.initiate(p)
}
func (f *fakeRemote) ConfirmOTP(_ context.Context, p providers.Payment, otp string) (providers.Result, error) {
	f.confirms.Add(1)
	time.Sleep(f.delay)
	return providers.Result{Outcome: providers.Succeeded, CapturedMinor: p.AmountMinor}, nil
}
func (f *fakeRemote) CompletePage(context.Context, providers.Payment, providers.PageSubmission) (providers.Result, error) {
	return providers.Result{}, providers.ErrUnsupported
}
func (f *fakeRemote) Status(context.Context, providers.Payment) (providers.Result, error) {
	return providers.Result{Outcome: providers.Pending}, nil
}

// TestRemoteAdapter: a remote provider sees the intent recorded as
// processing before it is called; an unknown answer leaves it processing;
// racing confirms make exactly one provider call.
func TestRemoteAdapter(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		f := &fakeRemote{delay: 20 * time.Millisecond}
		e.reg.RegisterLivePayments("bank_a", func(context.Context, providers.Reader, string) (providers.PaymentAdapter, error) { return f, nil })
		in := CreateParams{AmountMinor: ptr[int64](500), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: ptr("+25377123456"), Scenario: "success"}

		f.initiate = func(p providers.Payment) (providers.Result, error) {
			if p.MSISDN != "77123456" || p.Scenario != "" {
				t.Errorf("adapter got msisdn %q scenario %q", p.MSISDN, p.Scenario)
			}
			r, err := load(ctx, db, p.MerchantID, true, p.ID)
			if err != nil || r.Status != Processing {
				t.Errorf("before the call the intent is %v %v", r, err)
			}
			return providers.Result{Outcome: providers.Pending, NextAction: &providers.NextAction{Type: providers.ActionCollectOTP, OTPLength: 6}}, nil
		}
		pi, err := e.svc.Create(ctx, store.NoClaim, e.live, in)
		if err != nil || pi.Status != RequiresAction || pi.NextAction.Type != "collect_otp" {
			t.Fatalf("create: %+v %v", pi, err)
		}
		var wg sync.WaitGroup
		var ok, conflicts atomic.Int32
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := e.svc.Confirm(ctx, store.NoClaim, e.live, pi.ID, "123456")
				switch {
				case err == nil && out.Status == Succeeded:
					ok.Add(1)
				case errs.IsCode(err, "invalid_state"):
					conflicts.Add(1)
				default:
					t.Errorf("confirm: %+v %v", out, err)
				}
			}()
		}
		wg.Wait()
		if f.confirms.Load() != 1 || ok.Load() != 1 || conflicts.Load() != 19 {
			t.Fatalf("%d provider calls, %d successes, %d conflicts", f.confirms.Load(), ok.Load(), conflicts.Load())
		}

		f.initiate = func(providers.Payment) (providers.Result, error) { return providers.Result{}, providers.ErrNoAnswer }
		pi, err = e.svc.Create(ctx, store.NoClaim, e.live, in)
		if err != nil || pi.Status != Processing {
			t.Fatalf("no answer: %+v %v", pi, err)
		}
		f.initiate = func(providers.Payment) (providers.Result, error) {
			return providers.Result{}, errors.New("connection reset")
		}
		pi, err = e.svc.Create(ctx, store.NoClaim, e.live, in)
		if e := errs.As(err); e == nil || e.Kind != errs.KindProvider || e.Extra["payment_intent"] != pi.ID || pi.Status != Processing {
			t.Fatalf("provider error: %+v %v", pi, err)
		}
		evs, _ := events.ForObject(ctx, db, pi.ID)
		if len(evs) != 1 || evs[0].Type != EventCreated || !json.Valid(evs[0].Data) {
			t.Fatalf("events of a processing intent: %+v", evs)
		}
		// Without a live adapter the provider is unavailable.
		if _, err := e.svc.Create(ctx, store.NoClaim, e.live, CreateParams{AmountMinor: ptr[int64](1), Currency: "ETB", Provider: "wallet_d", ReturnURL: ptr("http://x.example")}); !errs.IsCode(err, "provider_unavailable") {
			t.Fatalf("wallet_d live: %v", err)
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRecordCardPresent(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		ok := CardPresent{AmountMinor: 500, Currency: "DJF", TerminalID: "term_1", OutletID: "outlet_7", Brand: "visa", Last4: "4242",
			EntryMode: "chip", Approved: true, AuthCode: "A1B2C3", IdempotencyKey: "tp-1"}
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pi, err := e.svc.RecordCardPresent(ctx, store.NoClaim, e.test, ok)
				if err != nil {
					t.Errorf("record: %v", err)
				}
				ids[i] = pi.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("retries recorded two intents: %v", ids)
			}
		}
		pi, err := e.svc.Get(ctx, e.test, ids[0])
		if err != nil || pi.Status != Succeeded || pi.Provider != "wallet_a" || pi.AmountCapturedMinor != 500 || pi.Metadata["outlet_id"] != "outlet_7" {
			t.Fatalf("%+v %v", pi, err)
		}
		want := `{"type":"card_present","card_present":{"brand":"visa","last4":"4242","entry_mode":"chip","terminal_id":"term_1","auth_code":"A1B2C3","p2pe":true}}`
		if string(*pi.PaymentMethodDetails) != want {
			t.Fatalf("details %s", *pi.PaymentMethodDetails)
		}
		bal, _ := ledger.AccountBalance(ctx, db, ledger.AccountRef{MerchantID: e.test.MerchantID, Currency: "DJF", Kind: ledger.Available})
		evs, _ := events.ForObject(ctx, db, pi.ID)
		if bal != 500 || len(evs) != 2 || evs[1].Type != EventSucceeded {
			t.Fatalf("balance %d, events %+v", bal, evs)
		}
		// The same key in live mode is another request.
		if other, err := e.svc.RecordCardPresent(ctx, store.NoClaim, e.live, ok); err != nil || other.ID == pi.ID || !other.Livemode {
			t.Fatalf("live: %+v %v", other, err)
		}

		decline := ok
		decline.Approved, decline.AuthCode, decline.DeclineCode, decline.IdempotencyKey = false, "", "insufficient_funds", "tp-2"
		pi, err = e.svc.RecordCardPresent(ctx, store.NoClaim, e.test, decline)
		if err != nil || pi.Status != Canceled || pi.LastError == nil || pi.LastError.Code != "card_declined" ||
			pi.LastError.DeclineCode != "insufficient_funds" || pi.LastError.Provider != "wallet_a" {
			t.Fatalf("decline: %+v %v", pi, err)
		}
		bal, _ = ledger.AccountBalance(ctx, db, ledger.AccountRef{MerchantID: e.test.MerchantID, Currency: "DJF", Kind: ledger.Available})
		if bal != 500 {
			t.Fatalf("a decline moved the balance to %d", bal)
		}
		bad := []func(*CardPresent){
			func(c *CardPresent) { c.IdempotencyKey = "" },
			func(c *CardPresent) { c.AmountMinor = 0 },
			func(c *CardPresent) { c.Currency = "ETB" },
			func(c *CardPresent) { c.TerminalID = "t1" },
			func(c *CardPresent) { c.Last4 = "424" },
			func(c *CardPresent) { c.AuthCode = "" },
			func(c *CardPresent) { c.EntryMode = "" },
		}
		for i, f := range bad {
			c := ok
			c.IdempotencyKey = "bad"
			f(&c)
			if _, err := e.svc.RecordCardPresent(ctx, store.NoClaim, e.test, c); errs.As(err) == nil || errs.As(err).Kind != errs.KindInvalid {
				t.Errorf("case %d: %v", i, err)
			}
		}
		if err := ledger.Verify(ctx, db); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMoveIsCompareAndSet: a write at a stale version or from a state the
// transition does not leave is refused.
func TestMoveIsCompareAndSet(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		now := db.Now()
		r := &record{Intent: Intent{ID: "pi_cas", Status: RequiresAction, AmountMinor: 10, Currency: "DJF", Provider: "bank_a",
			Metadata: map[string]string{}, CreatedAt: now, MerchantID: e.test.MerchantID},
			flow: providers.FlowOTP, updatedAt: now}
		r.NextAction = &NextAction{Type: "collect_otp", OTPLength: 6}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return insert(ctx, tx, r) }); err != nil {
			t.Fatal(err)
		}
		write := func(c record, tr transition) error {
			return db.InTx(ctx, func(tx *store.Tx) error { return move(ctx, tx, &c, tr) })
		}
		won := *r
		won.Status = Succeeded
		if err := write(won, succeed); err != nil {
			t.Fatal(err)
		}
		late := *r
		late.Status = Canceled
		if err := write(late, cancel); !errors.Is(err, errLostRace) {
			t.Fatalf("stale write: %v", err)
		}
		again, _ := load(ctx, db, e.test.MerchantID, false, "pi_cas")
		again.Status = Canceled
		if err := write(*again, cancel); !errors.Is(err, errLostRace) {
			t.Fatalf("a succeeded intent was canceled: %v", err)
		}
	})
}
