package merchants

import (
	"context"
	"strings"
	"sync"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// User is a portal user: a principal like a key.
type User struct {
	ID         string `json:"id"`
	MerchantID string `json:"merchant_id"`
	Email      string `json:"email"`
	Role       string `json:"role"`
}

// CreateUser adds a portal user with a role (admin, approver, viewer).
func (s *Service) CreateUser(ctx context.Context, merchantID, email, password, role string) (User, error) {
	return s.CreateUserBy(ctx, merchantID, "", email, password, role)
}

// CreateUserBy is CreateUser for a user made by another (createdBy, a
// portal user's id), which four-eyes remembers: such a user made after a
// request by its requester's person cannot approve it (SamePerson).
func (s *Service) CreateUserBy(ctx context.Context, merchantID, createdBy, email, password, role string) (User, error) {
	email, err := checkNewUser(email, role)
	if err != nil {
		return User{}, err
	}
	if len(password) < 10 {
		return User{}, errs.Invalid("password", "parameter_invalid", "password must be at least 10 characters")
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return User{}, err
	}
	u := User{ID: ids.New("usr_"), MerchantID: merchantID, Email: email, Role: role}
	var by any
	if createdBy != "" {
		by = createdBy
	}
	// A password given by another user is an invitation: the new user must
	// replace it at first sign-in (SetOwnPassword) before anything else works.
	_, err = s.db.Exec(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, role, created_by, must_set_password, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, merchantID, email, hash, role, by, createdBy != "", store.Micros(s.db.Now()))
	if store.IsConflict(err) {
		return User{}, errs.Conflict("email_taken", "a user with that email exists")
	}
	return u, err
}

// checkNewUser normalises a new user's email and checks it and the role.
func checkNewUser(email, role string) (string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", err
	}
	if !strings.Contains(email, "@") {
		return "", errs.Invalid("email", "parameter_invalid", "email is not an address")
	}
	if role != "admin" && role != "approver" && role != "viewer" {
		return "", errs.Invalid("role", "parameter_invalid", "role must be admin, approver or viewer")
	}
	return email, nil
}

// Login checks a portal user's email and password. A wrong email and a wrong
// password give the same error; the hash runs either way so timing tells
// nothing.
func (s *Service) Login(ctx context.Context, email, password string) (User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	var u User
	var hash string
	err = s.db.QueryRow(ctx, `SELECT id, merchant_id, email, role, password_hash FROM users WHERE email = ? AND disabled_at IS NULL`,
		email).Scan(&u.ID, &u.MerchantID, &u.Email, &u.Role, &hash)
	bad := &errs.Error{Kind: errs.KindUnauthenticated, Code: "invalid_login", Message: "wrong email or password"}
	if store.IsNotFound(err) {
		auth.VerifyPassword(dummyHash(), password)
		return User{}, bad
	}
	if err != nil {
		return User{}, err
	}
	ok, err := auth.VerifyPassword(hash, password)
	if err != nil || !ok {
		return User{}, bad
	}
	return u, nil
}

// SetOwnPassword replaces the invitation password of a user who must set
// their own (must_set_password) by one they chose, and ends their other
// portal sessions (keepSession, a session id, stays). The new password must
// be at least 10 characters and differ from the invitation. A compare-and-set
// on the flag makes it once only: errs.Conflict password_already_set after.
func (s *Service) SetOwnPassword(ctx context.Context, userID, password, keepSession string) error {
	if len(password) < 10 {
		return errs.Invalid("password", "parameter_invalid", "password must be at least 10 characters")
	}
	var old string
	var must bool
	err := s.db.QueryRow(ctx, `SELECT password_hash, must_set_password FROM users WHERE id = ? AND disabled_at IS NULL`, userID).Scan(&old, &must)
	if store.IsNotFound(err) {
		return errs.NotFound("user", userID)
	}
	if err != nil {
		return err
	}
	if !must {
		return errs.Conflict("password_already_set", "your password is already your own")
	}
	if same, _ := auth.VerifyPassword(old, password); same {
		return errs.Invalid("password", "password_reused", "choose a password other than the one you were given")
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `UPDATE users SET password_hash = ?, must_set_password = FALSE WHERE id = ? AND must_set_password = TRUE`, hash, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.Conflict("password_already_set", "your password is already your own")
		}
		_, err = tx.Exec(ctx, `DELETE FROM portal_sessions WHERE user_id = ? AND id <> ?`, userID, keepSession)
		return err
	})
}

// dummyHash is verified against when the email is unknown, to equalise timing.
var dummyHash = sync.OnceValue(func() string {
	h, _ := auth.HashPassword("payd-dummy-password")
	return h
})
