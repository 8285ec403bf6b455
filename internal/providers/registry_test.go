package providers

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/errs"
)

type nopAdapter struct{ PaymentAdapter }

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	if _, err := r.PaymentAdapter(ctx, nil, "mer_1", false, BankA); !errs.IsCode(err, "provider_unavailable") {
		t.Fatalf("no sandbox: %v", err)
	}
	sb := nopAdapter{}
	r.UseSandboxPayments(sb)
	if a, err := r.PaymentAdapter(ctx, nil, "mer_1", false, WalletD); err != nil || a != sb {
		t.Fatalf("test mode: %v %v", a, err)
	}
	_, err := r.PaymentAdapter(ctx, nil, "mer_1", true, BankA)
	if e := errs.As(err); e == nil || e.Kind != errs.KindUnavailable || e.Code != "provider_unavailable" {
		t.Fatalf("live without an adapter: %v", err)
	}
	live := nopAdapter{}
	var asked string
	r.RegisterLivePayments(BankA, func(_ context.Context, _ Reader, m string) (PaymentAdapter, error) { asked = m; return live, nil })
	if a, err := r.PaymentAdapter(ctx, nil, "mer_2", true, BankA); err != nil || a != live || asked != "mer_2" {
		t.Fatalf("live: %v %v %s", a, err, asked)
	}
}
