package merchants

import (
	"context"
	"database/sql"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// UserRecord is a portal user as an admin sees it.
type UserRecord struct {
	User
	CreatedAt  time.Time
	DisabledAt *time.Time
	// MustSetPassword is set while the user still has an invitation
	// password (made by an admin or an operator, or reset by an operator).
	MustSetPassword bool
}

// ListUsers lists a merchant's portal users, oldest first.
func (s *Service) ListUsers(ctx context.Context, merchantID string) ([]UserRecord, error) {
	rows, err := s.db.Query(ctx, `SELECT id, merchant_id, email, role, created_at, disabled_at, must_set_password FROM users WHERE merchant_id = ? ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UserRecord
	for rows.Next() {
		var u UserRecord
		var created int64
		var disabled sql.NullInt64
		if err := rows.Scan(&u.ID, &u.MerchantID, &u.Email, &u.Role, &created, &disabled, &u.MustSetPassword); err != nil {
			return nil, err
		}
		u.CreatedAt = store.FromMicros(created)
		u.DisabledAt = store.NullMicros(disabled)
		out = append(out, u)
	}
	return out, rows.Err()
}

// DisableUser stops a portal user from signing in (their sessions end at
// their next request). Users are disabled rather than deleted: they remain
// the principal named on what they approved.
func (s *Service) DisableUser(ctx context.Context, merchantID, userID string) error {
	res, err := s.db.Exec(ctx, "UPDATE users SET disabled_at = ? WHERE id = ? AND merchant_id = ? AND disabled_at IS NULL",
		store.Micros(s.db.Now()), userID, merchantID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.NotFound("user", userID)
	}
	return nil
}
