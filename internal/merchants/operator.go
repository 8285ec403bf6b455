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

// CreateUserByOperator is CreateUser for `payd user create`: the user gets a
// random one-time invitation password, returned once (only its hash is
// stored), which the portal makes them replace at their first sign-in
// (must_set_password, as for a user an admin makes). The user and the audit
// row naming the operator (user.create, recorded in test mode: a user belongs
// to no mode) commit together. An unknown merchant is errs.NotFound.
func (s *Service) CreateUserByOperator(ctx context.Context, merchantID, email, role string) (User, string, error) {
	email, err := checkNewUser(email, role)
	if err != nil {
		return User{}, "", err
	}
	password := ids.Secret("", 12)
	hash, err := auth.HashPassword(password)
	if err != nil {
		return User{}, "", err
	}
	u := User{ID: ids.New("usr_"), MerchantID: merchantID, Email: email, Role: role}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := Get(ctx, tx, merchantID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, role, must_set_password, created_at) VALUES (?, ?, ?, ?, ?, TRUE, ?)`,
			u.ID, merchantID, email, hash, role, store.Micros(tx.Now()))
		if store.IsConflict(err) {
			return errs.Conflict("email_taken", "a user with that email exists")
		}
		if err != nil {
			return err
		}
		return AuditInTx(ctx, tx, merchantID, false, OperatorPrincipal, "user.create", u.ID, email+" as "+role)
	})
	if err != nil {
		return User{}, "", err
	}
	return u, password, nil
}
