package merchants

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// List returns every merchant, oldest first (the operator's `payd merchant
// list`; merchants are few, so there is no paging).
func (s *Service) List(ctx context.Context) ([]Merchant, error) {
	rows, err := s.db.Query(ctx, `SELECT `+merchantColumns+` FROM merchants ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Merchant
	for rows.Next() {
		m, err := scanMerchant(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ResetPassword gives the portal user with email a new random password and
// returns it (shown once: only its hash is stored). The user's open portal
// sessions end, so whoever knew the old password is signed out. The new
// password is a one-time invitation: the portal makes the user replace it
// at sign-in (SetOwnPassword).
func (s *Service) ResetPassword(ctx context.Context, email string) (string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", err
	}
	if email == "" {
		return "", errs.Missing("email")
	}
	password := ids.Secret("", 12)
	hash, err := auth.HashPassword(password)
	if err != nil {
		return "", err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var userID string
		err := tx.QueryRow(ctx, `SELECT id FROM users WHERE email = ?`, email).Scan(&userID)
		if store.IsNotFound(err) {
			return errs.NotFound("user", email)
		}
		if err != nil {
			return err
		}
		// The printed password is an invitation like an admin's: the user
		// must choose their own at the next sign-in.
		if _, err := tx.Exec(ctx, `UPDATE users SET password_hash = ?, must_set_password = TRUE WHERE id = ?`, hash, userID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM portal_sessions WHERE user_id = ?`, userID)
		return err
	})
	return password, err
}
