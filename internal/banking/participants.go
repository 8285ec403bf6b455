package banking

import (
	"context"
	"database/sql"
	"strings"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Participant is a participant bank: a merchant created with a BIC. Its DJF
// available balance is its settlement account.
type Participant struct {
	MerchantID string
	BIC        string
	// DeferredSettlement makes transfers to this bank ACSP at first and
	// settled by a background job.
	DeferredSettlement bool
}

// errNotParticipant is the 403 for a caller that is not a participant bank.
func errNotParticipant() error {
	return errs.Permission("permission_denied", "bank transfer endpoints are for participant banks (merchants created with a BIC)")
}

// Caller returns the participant bank behind the principal, or a 403
// permission_denied when its merchant has no BIC.
func (s *Service) Caller(ctx context.Context, p auth.Principal) (Participant, error) {
	return caller(ctx, s.db, p)
}

// caller is Caller reading through q (a request's Work).
func caller(ctx context.Context, q store.Querier, p auth.Principal) (Participant, error) {
	var bic sql.NullString
	var deferred bool
	err := q.QueryRow(ctx, "SELECT bic, deferred_settlement FROM merchants WHERE id = ?", p.MerchantID).Scan(&bic, &deferred)
	if store.IsNotFound(err) || (err == nil && bic.String == "") {
		return Participant{}, errNotParticipant()
	}
	if err != nil {
		return Participant{}, err
	}
	return Participant{MerchantID: p.MerchantID, BIC: bic.String, DeferredSettlement: deferred}, nil
}

// participantByBIC finds the participant with this BIC, reading an 8- and an
// 11-character BIC with branch XXX (the primary office) as the same bank.
func participantByBIC(ctx context.Context, q store.Querier, bic string) (Participant, bool, error) {
	b8, b11 := bicForms(bic)
	var p Participant
	err := q.QueryRow(ctx, "SELECT id, bic, deferred_settlement FROM merchants WHERE bic = ? OR bic = ?", b8, b11).
		Scan(&p.MerchantID, &p.BIC, &p.DeferredSettlement)
	if store.IsNotFound(err) {
		return Participant{}, false, nil
	}
	if err != nil {
		return Participant{}, false, err
	}
	return p, true, nil
}

// bicForms returns the 8-character form of a BIC and the 11-character form
// with branch XXX; a BIC with another branch is returned as is in both.
func bicForms(bic string) (string, string) {
	switch {
	case len(bic) == 8:
		return bic, bic + "XXX"
	case len(bic) == 11 && strings.HasSuffix(bic, "XXX"):
		return bic[:8], bic
	}
	return bic, bic
}

// sameBIC reports whether two BICs name the same office.
func sameBIC(a, b string) bool {
	a8, a11 := bicForms(a)
	b8, b11 := bicForms(b)
	return a8 == b8 && a11 == b11
}
