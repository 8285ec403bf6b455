package payouts

import (
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/screening"
)

// screeningAvailable refuses live payouts while no sanctions list is loaded:
// live money never moves unscreened. Test mode is screened when a list is
// loaded and goes on without one (not_screened), so the sandbox stays usable
// on a machine with no list.
func (s *Service) screeningAvailable(livemode bool) error {
	if !livemode || s.screener.Ready() {
		return nil
	}
	return ScreeningUnavailable()
}

// ScreeningUnavailable is the 503 screening_unavailable error of a live
// request refused because no sanctions list is loaded.
func ScreeningUnavailable() error {
	return &errs.Error{Kind: errs.KindUnavailable, Code: "screening_unavailable", Status: 503,
		Message: "live payouts are refused: " + screening.ErrUnavailable.Error() + "; nothing was created"}
}
