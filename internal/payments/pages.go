package payments

import (
	"context"
	"net/url"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/store"
)

// HostedPage implements the hosted pages' backend: what the page of intent
// id shows. A missing or wrong token, or an intent without a hosted page, is
// 404 (the same answer, so a token cannot be probed).
func (s *Service) HostedPage(ctx context.Context, id, token string) (providers.HostedPage, error) {
	r, err := s.pageIntent(ctx, id, token)
	if err != nil {
		return providers.HostedPage{}, err
	}
	return s.pageView(ctx, r), nil
}

// SubmitHostedPage records what the customer submitted on the page: the
// provider decides (sandbox: the test cards and the scenario in force), and
// the intent settles exactly once however many submits race. The answer
// says where the browser goes: back to the page for a next step (3-D
// Secure) or to return_url once the intent no longer waits for the page.
func (s *Service) SubmitHostedPage(ctx context.Context, id, token string, sub providers.PageSubmission) (providers.HostedPage, error) {
	ctx = context.WithoutCancel(ctx)
	declines := 0
	r, _, err := s.step(ctx, store.NoClaim,
		func() (*record, error) { return s.pageIntent(ctx, id, token) },
		func(r *record) error {
			if r.Status != RequiresAction || r.pageStep != sub.Step {
				return errNothingToDo
			}
			var err error
			declines, err = s.pageDeclines(ctx, r.ID)
			return err
		},
		func(a providers.PaymentAdapter, pay providers.Payment) (providers.Result, error) {
			res, err := a.CompletePage(ctx, pay, sub)
			if err == nil && sub.Step == providers.StepCard && res.Outcome == providers.Failed && res.Failure != nil &&
				res.Failure.Code == "card_declined" && declines+1 < MaxCardAttempts {
				// Another card may be tried: the intent keeps waiting on
				// its card page, with the decline as its last_error.
				res = providers.Result{Outcome: providers.Pending, PageStep: providers.StepCard, Failure: res.Failure,
					MethodDetails: res.MethodDetails, FailFirstWebhook: res.FailFirstWebhook}
			}
			return res, err
		})
	if err != nil && err != errNothingToDo {
		return providers.HostedPage{}, err
	}
	return s.pageView(ctx, r), nil
}

func (s *Service) pageIntent(ctx context.Context, id, token string) (*record, error) {
	r, err := loadByID(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	if !r.tokenMatches(token) {
		return nil, errs.NotFound("payment_intent", id)
	}
	return r, nil
}

// pageView is what the hosted page shows of an intent, with the merchant's
// name (a failure to read it leaves the page without it rather than failing).
func (s *Service) pageView(ctx context.Context, r *record) providers.HostedPage {
	v := providers.HostedPage{IntentID: r.ID, Provider: r.Provider, Status: string(r.Status), AmountMinor: r.AmountMinor,
		Currency: r.Currency, Method: r.Metadata[metaWalletDMethod], Methods: WalletDMethods}
	if r.Description != nil {
		v.Description = *r.Description
	}
	if r.Status == RequiresAction {
		v.Step = r.pageStep
	}
	if r.ReturnURL != nil {
		v.ReturnURL = ReturnURL(*r.ReturnURL, r.ID)
	}
	switch {
	case r.LastError != nil:
		v.Error = r.LastError.Message
	case r.Status == Canceled && r.CancellationReason != nil && *r.CancellationReason == ReasonAbandoned:
		v.Error = "This payment was canceled: it was not completed in time. Nothing was charged."
	case r.Status == Canceled:
		v.Error = "This payment was canceled by the merchant. Nothing was charged."
	}
	if m, err := merchants.Get(ctx, s.db, r.MerchantID); err == nil {
		v.MerchantName = m.Name
	}
	if v.Step == providers.StepCard && r.LastError != nil {
		if n, err := s.pageDeclines(ctx, r.ID); err == nil {
			v.AttemptsLeft = max(MaxCardAttempts-n, 0)
		}
	}
	return v
}

// MaxCardAttempts is how many cards a customer may try on an intent's hosted
// card page: a declined card leaves the page open for another until this
// many have been declined, and the last decline cancels the intent.
const MaxCardAttempts = 3

// pageDeclines is how many cards were declined on the intent's card page.
func (s *Service) pageDeclines(ctx context.Context, id string) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, "SELECT page_attempts FROM payment_intents WHERE id = ?", id).Scan(&n)
	return n, err
}

// ReturnURL is where a redirect flow sends the customer back:
// return_url with payment_intent=<id> added to its query.
func ReturnURL(returnURL, id string) string {
	u, err := url.Parse(returnURL)
	if err != nil {
		return returnURL
	}
	q := u.Query()
	q.Set("payment_intent", id)
	u.RawQuery = q.Encode()
	return u.String()
}
