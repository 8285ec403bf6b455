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
	email, err := NormalizeEmail(email)
	if err != nil {
		return User{}, err
	}
	if !strings.Contains(email, "@") {
		return User{}, errs.Invalid("email", "parameter_invalid", "email is not an address")
	}
	if len(password) < 10 {
		return User{}, errs.Invalid("password", "parameter_invalid", "password must be at least 10 characters")
	}
	if role != "admin" && role != "approver" && role != "viewer" {
		return User{}, errs.Invalid("role", "parameter_invalid", "role must be admin, approver or viewer")
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
	_, err = s.db.Exec(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, role, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.ID, merchantID, email, hash, role, by, store.Micros(s.db.Now()))
	if store.IsConflict(err) {
		return User{}, errs.Conflict("email_taken", "a user with that email exists")
	}
	return u, err
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

// dummyHash is verified against when the email is unknown, to equalise timing.
var dummyHash = sync.OnceValue(func() string {
	h, _ := auth.HashPassword("payd-dummy-password")
	return h
})
