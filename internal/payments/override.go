package payments

import (
	"context"
	"errors"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// Override is the answer of POST /v1/sandbox/overrides.
type Override struct {
	PaymentIntentID string `json:"payment_intent_id"`
	Scenario        string `json:"scenario"`
	Applied         bool   `json:"applied"`
}

// OverrideScenario makes the next step of a waiting test-mode intent (its
// confirm, page submit or push approval) follow a sandbox scenario. The
// scenario must be one the intent's rail offers (400 invalid_scenario), and
// the intent must still wait for that step (409 invalid_state).
func (s *Service) OverrideScenario(ctx context.Context, cl store.Claim, p auth.Principal, id, scenario string) (Override, error) {
	work := s.db.Within(cl)
	if id == "" {
		return Override{}, errs.Missing("payment_intent_id")
	}
	if scenario == "" {
		return Override{}, errs.Missing("scenario")
	}
	for range maxRaces {
		r, err := load(ctx, work, p.MerchantID, p.Livemode, id)
		if err != nil {
			if e := errs.As(err); e != nil && e.Kind == errs.KindNotFound {
				e.Param = "payment_intent_id"
			}
			return Override{}, err
		}
		adapter, err := s.adapterFor(ctx, work, r)
		if err != nil {
			return Override{}, err
		}
		sel, ok := adapter.(providers.ScenarioSelector)
		if !ok {
			return Override{}, errs.Permission("permission_denied", "sandbox scenarios apply to test-mode payment intents only")
		}
		if err := sel.CheckScenario(r.rail(), scenario); err != nil {
			return Override{}, err
		}
		if r.Status != RequiresAction {
			return Override{}, errs.InvalidState("payment intent %s is %s: it has no next step for a scenario to decide", r.ID, r.Status)
		}
		err = work.InTx(ctx, func(tx *store.Tx) error {
			c := *r
			c.scenario, c.updatedAt = scenario, tx.Now()
			if err := move(ctx, tx, &c, overrideScenario); err != nil {
				return err
			}
			// A push approval's next step is the provider's answer: ask
			// for it now, so the scenario applies without waiting.
			if c.NextAction != nil && c.NextAction.Type == providers.ActionPushApproval {
				return s.schedulePoll(ctx, tx, c.ID, tx.Now())
			}
			return nil
		})
		if errors.Is(err, errLostRace) {
			continue
		}
		if err != nil {
			return Override{}, err
		}
		return Override{PaymentIntentID: r.ID, Scenario: scenario, Applied: true}, nil
	}
	return Override{}, errs.InvalidState("payment intent %s kept changing; retrieve it and try again", id)
}
