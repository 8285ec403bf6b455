package portal

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// formKeyField is the hidden field that carries a form's idempotency key.
const formKeyField = "idempotency_key"

// maxFormKey is the longest form key accepted (an Idempotency-Key's limit);
// a longer one is refused before it is held anywhere.
const maxFormKey = 255

// newFormKey is a fresh idempotency key for a form that creates something:
// each rendering of the form gets one, so submitting it twice (a double
// click, a reload that re-posts, a back button) sends the same key.
func newFormKey() string { return ids.New("pfk_") }

// errFormKey refuses a create without its form's key (a page rendered
// before forms carried one, or a hand-made post).
var errFormKey = errs.Invalid(formKeyField, "parameter_missing", "This form is out of date: reload the page and submit it again.")

// once runs a create submitted from a portal form exactly once per form key,
// with the idempotency the API gives an Idempotency-Key: the key's claim,
// what create writes and the page to go to commit in one transaction, and a
// second submission of the same form goes to that page without creating
// anything (the same key with other values is refused). fields are the
// form values that make the request (the CSRF token is not one of them).
//
// create runs with the claim of the form's key, which it hands to the
// capability operation it calls, and returns the path to redirect to. once returns it, or the error the
// create (or the key) met, after which nothing of it remains. A commit whose
// outcome is unknown (its connection died during it) is settled as the API
// settles it: the key is read again, and its stored page proves the commit;
// without one, nothing committed and the create runs again, as it does after
// a transient failure.
//
// Two submissions of one form in this process (a double click) do not run
// at once: the second waits for the first to end and then goes to the page
// the first stored, as a later one would. (Across processes the key's row
// settles it: the second's create rolls back when it meets the first's.)
func (p *Portal) once(r *http.Request, c *reqCtx, fields url.Values, create func(ctx context.Context, cl store.Claim) (string, error)) (string, error) {
	key := strings.TrimSpace(r.PostFormValue(formKeyField))
	if key == "" || len(key) > maxFormKey {
		return "", errFormKey
	}
	pr := c.principal()
	body := fields.Encode()
	req := idempotency.Request{Scope: idempotency.Scope{MerchantID: pr.MerchantID, Livemode: pr.Livemode, PrincipalID: pr.ID},
		Key: "portal:" + key, Method: r.Method, Path: r.URL.Path, Hash: idempotency.RequestHash(r.Method, r.URL.Path, []byte(body))}
	leave, err := p.inFlight.Enter(r.Context(), req, true)
	if err != nil {
		return "", err
	}
	defer leave()
	var done string
	out := idempotency.Run(r.Context(), p.cfg.DB, req, idempotency.Options{
		LookFirst: true,
		Again:     func(run int, _ error) bool { return run < maxOnceRuns },
	}, func(ctx context.Context, cl *idempotency.Claim) (idempotency.Answer, error) {
		path, err := create(ctx, cl)
		if err != nil {
			return idempotency.Answer{}, err
		}
		done = path
		return idempotency.Answer{Keep: true, Stored: idempotency.Stored{Status: http.StatusSeeOther, ContentType: "text/plain", Body: []byte(path)}}, nil
	})
	switch {
	case out.Replay != nil:
		// The same form, committed by an earlier submission (or by one
		// that raced this one).
		return string(out.Replay.Body), nil
	case out.Answered:
		return done, nil
	case out.Stage == idempotency.StageAgain && (errors.Is(out.Err, store.ErrCommitUnknown) || store.IsConnLost(out.Err)):
		return "", errOutcomeUnknown(out.Err)
	}
	return "", out.Err
}

// errOutcomeUnknown is once's answer when no run could learn whether its
// commit happened: the user is told that submitting the same form again is
// safe (it carries the same key, so it replays or creates once), rather than
// shown a bare internal error that invites a second, fresh form.
func errOutcomeUnknown(cause error) *errs.Error {
	return &errs.Error{Kind: errs.KindUnavailable, Code: "outcome_unknown", Err: cause,
		Message: "The database did not confirm whether this was saved. Submit this same form again: it is safe, and it will not create a second one."}
}

// maxOnceRuns bounds how often once runs a create again.
const maxOnceRuns = 4
