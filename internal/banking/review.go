package banking

import (
	"context"
	"github.com/payd/payd/internal/merchants"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/banking/iso20022"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Review decisions on a held (ACWP) transfer.
const (
	DecisionRelease = "release"
	DecisionReject  = "reject"
)

// ReasonRR04 (RegulatoryReason) is the status reason of a transfer rejected
// on compliance review.
const ReasonRR04 = "RR04"

// rr04 is the status reason given to a held transfer rejected on review.
var rr04 = iso20022.StatusReason{Code: ReasonRR04, Text: "Regulatory Reason",
	Detail: "held by sanctions screening and rejected on compliance review"}

// MaxReviewNote is the longest review note accepted.
const MaxReviewNote = 500

// ReviewParams is a compliance decision.
type ReviewParams struct {
	Decision string
	Note     string
}

// Review decides a held (ACWP) transfer. Only the creditor agent reviews
// (the bank that would credit the screened party), and never with the
// principal that sent the transfer (which matters only when a bank pays
// itself): 403 permission_denied / self_approval_not_allowed. A transfer
// that is not held is 409 invalid_state.
//
// release settles it (ACSC, transfer.settled); reject makes it RJCT with
// reason RR04 and gives the amount back to the debtor agent
// (transfer.rejected). The status change, the posting and the event are one
// transaction, in the request's unit of work (cl; store.NoClaim without one).
func (s *Service) Review(ctx context.Context, cl store.Claim, p auth.Principal, uetr string, rp ReviewParams) (*Transfer, error) {
	work := s.db.Within(cl)
	if _, err := caller(ctx, work, p); err != nil {
		return nil, err
	}
	switch rp.Decision {
	case DecisionRelease, DecisionReject:
	case "":
		return nil, errs.Missing("decision")
	default:
		return nil, errs.Invalid("decision", "parameter_invalid", "decision must be release or reject")
	}
	if utf8.RuneCountInString(rp.Note) > MaxReviewNote {
		return nil, errs.Invalid("note", "parameter_invalid", "note must be at most %d characters", MaxReviewNote)
	}
	var out *Transfer
	err := work.InTx(ctx, func(tx *store.Tx) error {
		t, err := getTransfer(ctx, tx, p.MerchantID, p.Livemode, uetr, true)
		if store.IsNotFound(err) {
			return errs.NotFound("transfer", uetr)
		}
		if err != nil {
			return err
		}
		if t.CreditorMerchantID != p.MerchantID {
			return errs.Permission("permission_denied", "only the creditor agent reviews a held transfer")
		}
		same, err := merchants.SamePerson(ctx, tx, t.CreatedBy, p.ID, t.CreatedAt)
		if err != nil {
			return err
		}
		if same {
			return errs.Permission("self_approval_not_allowed", "the person who sent the transfer cannot review it")
		}
		if t.Status != StatusACWP {
			return errs.InvalidState("transfer %s is %s, not held for review (ACWP)", t.UETR, t.Status)
		}
		who := transitionUpdate{reviewedBy: p.ID, reviewNote: rp.Note}
		if rp.Decision == DecisionRelease {
			now := tx.Now()
			who.settledAt = &now
			if err := transitionRelease.apply(ctx, tx, t, who); err != nil {
				return err
			}
			if err := postSettleInFlight(ctx, tx, t); err != nil {
				return err
			}
			out = t
			return emit(ctx, tx, t, EventSettled)
		}
		who.reason = rr04
		if err := transitionReject.apply(ctx, tx, t, who); err != nil {
			return err
		}
		if err := postRelease(ctx, tx, t); err != nil {
			return err
		}
		out = t
		return emit(ctx, tx, t, EventRejected)
	})
	return out, err
}
