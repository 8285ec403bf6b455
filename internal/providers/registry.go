package providers

import (
	"context"
	"sync"

	"github.com/payd/payd/internal/errs"
)

// LivePaymentFactory builds a live payment adapter for one merchant (from its
// provider connection, read through rd: the caller's store.Work).
type LivePaymentFactory func(ctx context.Context, rd Reader, merchantID string) (PaymentAdapter, error)

// Registry picks the payment adapter for a call by the key's mode: the
// sandbox for test-mode keys, the registered live adapter for live ones.
// Business logic asks the registry and never names an implementation.
type Registry struct {
	mu      sync.RWMutex
	sandbox PaymentAdapter
	live    map[string]LivePaymentFactory
}

// NewRegistry makes an empty registry.
func NewRegistry() *Registry { return &Registry{live: map[string]LivePaymentFactory{}} }

// UseSandboxPayments installs the adapter every test-mode payment goes to.
func (r *Registry) UseSandboxPayments(a PaymentAdapter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sandbox = a
}

// RegisterLivePayments installs the live adapter of one provider.
func (r *Registry) RegisterLivePayments(provider string, f LivePaymentFactory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[provider] = f
}

// PaymentAdapter returns the adapter for a payment with provider in the
// given mode. In live mode a provider without a live adapter answers 503
// provider_unavailable, and so does test mode without a sandbox. A live
// adapter's connection is read through rd: the caller's store.Work.
func (r *Registry) PaymentAdapter(ctx context.Context, rd Reader, merchantID string, livemode bool, provider string) (PaymentAdapter, error) {
	r.mu.RLock()
	sb, f := r.sandbox, r.live[provider]
	r.mu.RUnlock()
	if !livemode {
		if sb == nil {
			return nil, unavailable(provider)
		}
		return sb, nil
	}
	if f == nil {
		return nil, unavailable(provider)
	}
	return f(ctx, rd, merchantID)
}

func unavailable(provider string) *errs.Error {
	return &errs.Error{Kind: errs.KindUnavailable, Code: "provider_unavailable",
		Message: "the provider " + provider + " is not available in this mode"}
}
