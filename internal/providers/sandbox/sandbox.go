// Package sandbox is payd's mock provider: every test-mode payment (and
// payout) goes to it instead of a real rail. It simulates payd's twelve named
// scenarios, chosen by the X-Service-Scenario header, by a magic customer
// number (+25300000000X) or by a sandbox override, and it serves the hosted
// pages a real provider would (wallet_a phone and PIN, the card page with its
// 3-D Secure challenge, wallet_d's method picker) as plain server-rendered
// HTML that works without JavaScript.
//
// The adapter is stateless: what must survive between calls (the scenario,
// the page step) is stored on the intent by payd and handed back in
// providers.Payment. Nothing it is given (PIN, card number, CVC, OTP) is kept.
package sandbox

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
)

// OTP is the code that succeeds on every sandbox OTP flow.
const OTP = "123456"

// OTPLength is the length of sandbox codes.
const OTPLength = 6

// Config sets the sandbox's timings and where its pages are served.
type Config struct {
	// PublicURL is the base of redirect_urls (PAYD_PUBLIC_URL); it can be
	// changed later with SetPublicURL once the real address is known.
	PublicURL string
	// PushDelay is when push approvals arrive after creation
	// (PAYD_SANDBOX_PUSH_DELAY).
	PushDelay time.Duration
	// TimeoutDelay is how long network_timeout waits before failing
	// (PAYD_SANDBOX_TIMEOUT_DELAY).
	TimeoutDelay time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Sandbox is the mock provider's payment adapter.
type Sandbox struct {
	cfg       Config
	publicURL atomic.Value // string
}

var (
	_ providers.PaymentAdapter   = (*Sandbox)(nil)
	_ providers.ScenarioSelector = (*Sandbox)(nil)
)

// New makes the sandbox adapter.
func New(cfg Config) *Sandbox {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Sandbox{cfg: cfg}
	s.publicURL.Store(cfg.PublicURL)
	return s
}

// SetPublicURL changes the base of redirect_urls (payd learns its real
// address only once it listens).
func (s *Sandbox) SetPublicURL(u string) { s.publicURL.Store(u) }

// PublicURL is the current base of redirect_urls.
func (s *Sandbox) PublicURL() string { return s.publicURL.Load().(string) }

// Remote is false: the sandbox runs in process and has no side effects.
func (s *Sandbox) Remote() bool { return false }

// HoldsAuthorizations: the sandbox's card payments (hosted card page and
// card-present) may be authorised and captured later; a test card that
// succeeds is an authorisation when the intent's capture_method is manual.
func (s *Sandbox) HoldsAuthorizations() bool { return true }

// SelectScenario implements providers.ScenarioSelector: the header wins over
// the magic number, which is read exactly as the client sent it.
func (s *Sandbox) SelectScenario(rail, header, msisdn string) (string, error) {
	if header != "" {
		sc, ok := providers.ScenarioByName(header)
		if !ok {
			return "", errs.Invalid("X-Service-Scenario", "invalid_scenario", "unknown sandbox scenario %q", header)
		}
		if !providers.Offers(rail, sc) {
			return "", notOffered("X-Service-Scenario", rail, sc.Name)
		}
		return sc.Name, nil
	}
	if sc, ok := providers.ScenarioFromMSISDN(msisdn); ok {
		if !providers.Offers(rail, sc) {
			return "", notOffered("customer_msisdn", rail, sc.Name)
		}
		return sc.Name, nil
	}
	return "", nil
}

// CheckScenario implements providers.ScenarioSelector for overrides.
func (s *Sandbox) CheckScenario(rail, name string) error {
	sc, ok := providers.ScenarioByName(name)
	if !ok {
		return errs.Invalid("scenario", "invalid_scenario", "unknown sandbox scenario %q", name)
	}
	if !providers.Offers(rail, sc) {
		return notOffered("scenario", rail, sc.Name)
	}
	return nil
}

func notOffered(param, rail, name string) *errs.Error {
	return errs.Invalid(param, "invalid_scenario", "the sandbox scenario %s is not offered for %s", name, rail)
}

// wait sleeps d unless ctx ends first. Before it sleeps, an idempotent
// request that did not read its key yet does (p.BeforeDelay): a retry of a
// request already answered replays that answer at once rather than after
// the simulated delay.
func wait(ctx context.Context, p providers.Payment, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if p.BeforeDelay != nil {
		if err := p.BeforeDelay(ctx); err != nil {
			return err
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
