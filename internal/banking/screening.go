package banking

import (
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/screening"
)

// NameScreener screens a party name against the sanctions list. The wiring
// passes a *screening.Screener (PAYD_SANCTIONS_LIST); tests may pass a stub.
type NameScreener interface {
	Screen(name string) screening.Result
}

// readiness is implemented by a screener that can say whether it has a list
// loaded (*screening.Screener does).
type readiness interface{ Ready() bool }

// screeningAvailable refuses live transfers while no sanctions list is
// loaded: live money never moves unscreened. Test mode goes on without a
// list (names recorded not_screened), so the sandbox stays usable.
func (s *Service) screeningAvailable(livemode bool) error {
	if !livemode {
		return nil
	}
	switch r := s.screener.(type) {
	case nil:
	case readiness:
		if r.Ready() {
			return nil
		}
	default:
		return nil // a screener that cannot tell (a test stub) always screens
	}
	return &errs.Error{Kind: errs.KindUnavailable, Code: "screening_unavailable", Status: 503,
		Message: "live transfers are refused: " + screening.ErrUnavailable.Error() + "; nothing was recorded"}
}

// ScreenHit is the stored outcome of a name that matched the list (the
// others are screening.StatusClear and screening.StatusNotScreened).
const ScreenHit = screening.StatusHit

// NameScreening is the stored outcome of screening one name.
type NameScreening struct {
	Status  string            `json:"status"`
	Matches []screening.Match `json:"matches,omitempty"`
}

// screenParties screens both names of a transaction. A nil screener screens
// nothing.
func screenParties(s NameScreener, debtor, creditor string) *ScreeningRecord {
	if s == nil {
		return nil
	}
	one := func(name string) NameScreening {
		r := s.Screen(name)
		return NameScreening{Status: r.Status, Matches: r.Matches}
	}
	return &ScreeningRecord{Debtor: one(debtor), Creditor: one(creditor)}
}
