package merchants

import (
	"context"
	"database/sql"
	"math"
	"strings"
	"time"

	"github.com/payd/payd/internal/store"
)

// ApprovalThreshold returns the amount above which money leaving a merchant's
// balance in this mode (a payout, a batch, a refund) waits for a second
// person; nil means no threshold. The threshold is kept per mode, so a test
// key's settings never touch live money. Every capability that applies
// four-eyes reads the threshold here, so the rule has one owner.
func ApprovalThreshold(ctx context.Context, q store.Querier, merchantID string, livemode bool) (*int64, error) {
	c, err := ApprovalControls(ctx, q, merchantID, livemode)
	if err != nil {
		return nil, err
	}
	return c.Threshold, nil
}

// SamePerson reports whether two principals (key_... or usr_... ids) count as
// the same person for four-eyes: the approver of a money movement must not be
// its creator. A portal user and every key that user created (or rolled) are
// one person; a rolled key is the key it replaced (they share an identity).
// Keys made without a portal user (at merchant creation, by the CLI) are each
// a person of their own. Every capability that applies four-eyes asks here.
//
// A portal user made after the request (requestedAt) by one of the
// requester's people is the requester too: an admin cannot ask for money
// with a key, then make a user and approve through it. Users made before
// the request are people of their own. The chain is followed (a user made
// after the request by such a user counts as well).
func SamePerson(ctx context.Context, q store.Querier, creator, approver string, requestedAt time.Time) (bool, error) {
	if creator == approver {
		return true, nil
	}
	a, err := persons(ctx, q, creator)
	if err != nil {
		return false, err
	}
	b, err := persons(ctx, q, approver)
	if err != nil {
		return false, err
	}
	for p := range a {
		if b[p] {
			return true, nil
		}
	}
	// The approver's makers, while each was made after the request.
	at := store.Micros(requestedAt)
	for user, hops := approver, 0; strings.HasPrefix(user, "usr_") && hops < 8; hops++ {
		var by sql.NullString
		var created int64
		err := q.QueryRow(ctx, "SELECT created_by, created_at FROM users WHERE id = ?", user).Scan(&by, &created)
		if store.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !by.Valid || created <= at {
			return false, nil
		}
		if a[by.String] {
			return true, nil
		}
		user = by.String
	}
	return false, nil
}

// persons is the set of people a principal stands for: a user itself; a
// key's identity and every user who created a key of that identity.
func persons(ctx context.Context, q store.Querier, principal string) (map[string]bool, error) {
	out := map[string]bool{principal: true}
	if !strings.HasPrefix(principal, "key_") {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT k.identity, k.created_by FROM api_keys k
		WHERE k.identity = (SELECT identity FROM api_keys WHERE id = ?)`, principal)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var identity string
		var by sql.NullString
		if err := rows.Scan(&identity, &by); err != nil {
			return nil, err
		}
		out[identity] = true
		if by.Valid {
			out[by.String] = true
		}
	}
	return out, rows.Err()
}

// DefaultApprovalWindow is the window of the cumulative four-eyes rule
// until a merchant sets its own: the money a principal (an API key or a
// portal user) moved out of a merchant's balance in this mode within the
// window counts towards the approval threshold, so splitting a large refund
// or payout into small ones does not avoid the second person.
const DefaultApprovalWindow = 24 * time.Hour

// The bounds of a window a merchant may set: at least an hour (a shorter
// window would let a principal wait out the rule within a working day), at
// most 30 days (the sum stays a read of recent rows).
const (
	MinApprovalWindow = time.Hour
	MaxApprovalWindow = 30 * 24 * time.Hour
)

// Controls are a merchant's four-eyes controls in one mode: the approval
// threshold (nil: none) and the window of the cumulative rule.
type Controls struct {
	Threshold *int64
	Window    time.Duration
}

// Over reports whether amount, added to what the principal already moved
// within the window (earlier), passes the threshold.
func (c Controls) Over(earlier, amount int64) bool {
	return OverCumulative(c.Threshold, earlier, amount)
}

const controlsQuery = "SELECT approval_threshold_minor, approval_window_seconds FROM merchant_settings WHERE merchant_id = ? AND livemode = ?"

func scanControls(row interface{ Scan(...any) error }) (Controls, error) {
	var t, w sql.NullInt64
	c := Controls{Window: DefaultApprovalWindow}
	err := row.Scan(&t, &w)
	if store.IsNotFound(err) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if t.Valid {
		c.Threshold = &t.Int64
	}
	if w.Valid {
		c.Window = time.Duration(w.Int64) * time.Second
	}
	return c, nil
}

// ApprovalControls returns the merchant's threshold and window in one mode.
func ApprovalControls(ctx context.Context, q store.Querier, merchantID string, livemode bool) (Controls, error) {
	return scanControls(q.QueryRow(ctx, controlsQuery, merchantID, livemode))
}

// LockedControls is ApprovalControls read inside a transaction that holds
// the merchant's settings row (FOR UPDATE on PostgreSQL; SQLite's immediate
// transactions are exclusive already) until it ends. Capabilities that add
// up a principal's recent amounts take it first, so two concurrent requests
// of one principal are decided one after the other and cannot both slip
// under the threshold, and a settings change waits for them (or they for it).
func LockedControls(ctx context.Context, tx *store.Tx, merchantID string, livemode bool) (Controls, error) {
	return scanControls(tx.QueryRow(ctx, controlsQuery+tx.Dialect().ForUpdate(), merchantID, livemode))
}

// OverCumulative reports whether amount, added to what the principal already
// moved within the window (earlier), passes the threshold. A sum that would
// overflow passes it.
func OverCumulative(threshold *int64, earlier, amount int64) bool {
	if threshold == nil {
		return false
	}
	if earlier < 0 || amount > math.MaxInt64-earlier {
		return true
	}
	return earlier+amount > *threshold
}
