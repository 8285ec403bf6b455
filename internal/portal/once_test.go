package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/store"
)

// TestRefundFormCommitUnknown: a refund made from the portal's form whose
// commit answer is lost (the connection died during COMMIT) is settled by
// reading the form's key again. Committed, the key's stored page answers and
// nothing runs again; not committed, the create runs again. Either way the
// user lands on the intent's page with the success notice and exactly one
// refund exists. When no run's commit is ever confirmed, once gives up after
// its fourth run with an error page and nothing created, and the same form
// submitted again then makes the one refund.
func TestRefundFormCommitUnknown(t *testing.T) {
	t.Parallel()
	const maxOnceRuns = 4 // once.go
	cases := []struct {
		name  string
		fault func(n int64) store.CommitFault // for the nth commit of the submission
		// want: the page's status, its commits (attempted), refunds after it
		status, commits, refunds int
	}{
		{"committed, answer lost", func(n int64) store.CommitFault {
			if n == 1 {
				return store.CommitLostAfter
			}
			return store.CommitNormally
		}, http.StatusSeeOther, 1, 1},
		{"not committed, answer lost", func(n int64) store.CommitFault {
			if n == 1 {
				return store.CommitLostBefore
			}
			return store.CommitNormally
		}, http.StatusSeeOther, 2, 1},
		{"never confirmed", func(int64) store.CommitFault { return store.CommitLostBefore },
			http.StatusServiceUnavailable, maxOnceRuns, 0},
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		for _, tc := range cases {
			t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				pi, path, form := refundForm(t, e, admin)

				var commits atomic.Int64
				e.Main.DB.FaultCommits(func(context.Context) store.CommitFault { return tc.fault(commits.Add(1)) })
				pg := admin.Post(path+"/refunds", form)
				e.Main.DB.FaultCommits(nil)

				if pg.Status != tc.status {
					t.Fatalf("the form answered %d, want %d: %.800s", pg.Status, tc.status, pg.Body)
				}
				if n := commits.Load(); n != int64(tc.commits) {
					t.Errorf("%d commits tried, want %d", n, tc.commits)
				}
				if tc.status == http.StatusServiceUnavailable && !strings.Contains(pg.Body, "outcome_unknown") {
					t.Errorf("the unconfirmed create's page does not say its outcome is unknown: %.800s", pg.Body)
				}
				if tc.status == http.StatusSeeOther && pg.Location != path+"?done=refund_created" {
					t.Errorf("redirected to %q, want the intent's page with the success notice", pg.Location)
				}
				if n := countRefunds(t, e, pi); n != tc.refunds {
					t.Fatalf("%d refunds after the submission, want %d", n, tc.refunds)
				}
				if tc.refunds == 0 {
					// Nothing was created: submitting the same form again
					// makes the refund, once.
					if pg := admin.Post(path+"/refunds", form); pg.Status != http.StatusSeeOther {
						t.Fatalf("the form submitted again: %d %.800s", pg.Status, pg.Body)
					}
				}
				// A reload re-posting the form replays; still one refund.
				if pg := admin.Post(path+"/refunds", form); pg.Status != http.StatusSeeOther {
					t.Fatalf("the form re-posted: %d", pg.Status)
				}
				if n := countRefunds(t, e, pi); n != 1 {
					t.Fatalf("%d refunds in the end, want 1", n)
				}
				if in := e.Get("/v1/payment_intents/" + pi).Map(t); in["amount_refunded_minor"] != float64(300) {
					t.Fatalf("refunded %v, want 300", in["amount_refunded_minor"])
				}
			})
		}
	})
}

// refundForm makes a succeeded 1,000 DJF intent and returns it, its portal
// page and the values of that page's refund form for 300 (with the form's
// key).
func refundForm(t *testing.T, e *apptest.Env, admin *apptest.Portal) (pi, path string, form url.Values) {
	t.Helper()
	r := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"})
	pi, _ = r.Map(t)["id"].(string)
	if c := e.Post("/v1/payment_intents/"+pi+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
		t.Fatalf("confirm: %d %s", c.Status, c.Body)
	}
	path = "/portal/test/payment_intents/" + pi
	key := formKey(t, admin.Get(path))
	return pi, path, url.Values{"amount_minor": {"300"}, "reason": {"requested_by_customer"}, "idempotency_key": {key}}
}

// countRefunds is how many refunds the API lists for a payment intent.
func countRefunds(t *testing.T, e *apptest.Env, pi string) int {
	t.Helper()
	r := e.Get("/v1/refunds?payment_intent=" + pi)
	if r.Status != 200 {
		t.Fatalf("list refunds: %d %s", r.Status, r.Body)
	}
	data, _ := r.Map(t)["data"].([]any)
	return len(data)
}

// TestRefundFormDoubleClick: the same refund form submitted twice at once
// (the second while the first is still committing) makes one refund, and
// both submissions land on the intent's page with the success notice: the
// second waits for the first and goes where it went, without running the
// create itself (one commit is tried for the two submissions; on PostgreSQL a
// second run beside the first would try its own, and roll back).
func TestRefundFormDoubleClick(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		pi, path, form := refundForm(t, e, admin)
		form.Set("csrf_token", admin.CSRF)

		// The first submission's commit is held back for a moment, so the
		// second arrives while the first runs. Commits made for requests
		// (not background workers) are counted.
		var commits atomic.Int64
		e.Main.DB.FaultCommits(func(ctx context.Context) store.CommitFault {
			if httpx.RequestIDFrom(ctx) == "" {
				return store.CommitNormally
			}
			if commits.Add(1) == 1 {
				time.Sleep(300 * time.Millisecond)
			}
			return store.CommitNormally
		})
		defer e.Main.DB.FaultCommits(nil)
		post := func() (int, string) {
			req, _ := http.NewRequest("POST", admin.Base+path+"/refunds", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := admin.Client.Do(req)
			if err != nil {
				t.Error(err)
				return 0, ""
			}
			resp.Body.Close()
			return resp.StatusCode, resp.Header.Get("Location")
		}
		type answer struct {
			status   int
			location string
		}
		answers := make(chan answer, 2)
		for range 2 {
			go func() {
				s, l := post()
				answers <- answer{s, l}
			}()
			time.Sleep(50 * time.Millisecond)
		}
		for range 2 {
			if a := <-answers; a.status != http.StatusSeeOther || a.location != path+"?done=refund_created" {
				t.Errorf("a submission answered %d to %q, want 303 to the intent's page with the success notice", a.status, a.location)
			}
		}
		if n := countRefunds(t, e, pi); n != 1 {
			t.Fatalf("%d refunds, want 1", n)
		}
		if n := commits.Load(); n != 1 {
			t.Errorf("%d commits tried for the two submissions, want 1 (the second must wait, not run)", n)
		}
	})
}
