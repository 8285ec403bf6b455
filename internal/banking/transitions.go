package banking

import (
	"context"
	"time"

	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/statemachine"
	"github.com/payd/payd/internal/store"
)

// A transfer is created in its first status (ACSC, ACSP, ACWP or RJCT) by
// Submit; afterwards it moves only along this table, and every move is a
// compare-and-set in SQL, so two racing requests (a review and a retry, two
// settlement jobs) cannot both win.
//
//	ACSP --settle--> ACSC    background settlement of a deferred participant
//	ACWP --release-> ACSC    compliance review releases the hold
//	ACWP --reject--> RJCT    compliance review rejects it (reason RR04)
//
// ACSC and RJCT are terminal. Returns and cancellations do not change the
// status of a settled transfer; they add to returned_amount_minor.
type transition statemachine.Move[string]

var (
	transitionSettle  = transition{Name: "settle", From: []string{StatusACSP}, To: StatusACSC}
	transitionRelease = transition{Name: "release", From: []string{StatusACWP}, To: StatusACSC}
	transitionReject  = transition{Name: "reject", From: []string{StatusACWP}, To: StatusRJCT}
)

// machine is the transfer state machine.
var machine = statemachine.Table[string]{
	Name:     "transfers",
	Initial:  []string{StatusACSC, StatusACSP, StatusACWP, StatusRJCT},
	Terminal: []string{StatusACSC, StatusRJCT},
	Moves: []statemachine.Move[string]{
		statemachine.Move[string](transitionSettle),
		statemachine.Move[string](transitionRelease),
		statemachine.Move[string](transitionReject),
	},
}

// transitionUpdate are the columns a transition sets besides the status.
type transitionUpdate struct {
	reason     iso20022.StatusReason
	settledAt  *time.Time
	reviewedBy string
	reviewNote string
}

// apply moves the transfer along tr if, and only if, it is still in one of
// tr's source statuses; it returns errs.InvalidState otherwise.
func (tr transition) apply(ctx context.Context, tx *store.Tx, t *Transfer, u transitionUpdate) error {
	now := tx.Now()
	var settled, reviewedAt any
	if u.settledAt != nil {
		settled = store.Micros(*u.settledAt)
	}
	if u.reviewedBy != "" {
		reviewedAt = store.Micros(now)
	}
	args := []any{tr.To, nullString(u.reason.Code), nullString(u.reason.Text), nullString(u.reason.Detail), settled,
		nullString(u.reviewedBy), nullString(u.reviewNote), reviewedAt, store.Micros(now), t.ID}
	args = append(args, statemachine.Move[string](tr).Args()...)
	res, err := tx.Exec(ctx, `UPDATE transfers SET status = ?, reason_code = ?, reason_text = ?, reason_detail = ?,
		settled_at = COALESCE(?, settled_at), reviewed_by = COALESCE(?, reviewed_by), review_note = COALESCE(?, review_note),
		reviewed_at = COALESCE(?, reviewed_at), updated_at = ?
		WHERE id = ? AND status IN (`+store.Placeholders(len(tr.From))+`)`, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return errs.InvalidState("transfer %s cannot %s: it is not %s", t.UETR, tr.Name, tr.From[0])
	}
	t.Status = tr.To
	t.Reason = u.reason
	if u.settledAt != nil {
		t.SettledAt = u.settledAt
	}
	if u.reviewedBy != "" {
		t.ReviewedBy, t.ReviewNote, t.ReviewedAt = u.reviewedBy, u.reviewNote, &now
	}
	return nil
}
