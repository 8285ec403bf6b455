package merchants_test

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func hasCode(err error, code string) bool {
	e := errs.As(err)
	return e != nil && e.Code == code
}

// TestSetOwnPassword (finding 8): a password another user gave (CreateUserBy)
// or the CLI printed (ResetPassword, `payd user reset-password`) is an
// invitation the user replaces once, not with itself; the invitation then no
// longer signs in. A user who chose their own password has nothing to replace.
func TestSetOwnPassword(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms, m := newMerchant(t, db, "Invitations")
		admin, err := ms.CreateUser(ctx, m.MerchantID, "own@example.com", "own-password-1", "admin")
		if err != nil {
			t.Fatal(err)
		}
		if err := ms.SetOwnPassword(ctx, admin.ID, "another-password-1", ""); !hasCode(err, "password_already_set") {
			t.Fatalf("own password replaced as an invitation: %v", err)
		}
		u, err := ms.CreateUserBy(ctx, m.MerchantID, admin.ID, "invited@example.com", "invitation-1", "viewer")
		if err != nil {
			t.Fatal(err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, "invitation-1", ""); !hasCode(err, "password_reused") {
			t.Fatalf("invitation kept as own password: %v", err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, "short", ""); !hasCode(err, "parameter_invalid") {
			t.Fatalf("short password: %v", err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, "chosen-password-1", ""); err != nil {
			t.Fatal(err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, "chosen-password-2", ""); !hasCode(err, "password_already_set") {
			t.Fatalf("second replacement: %v", err)
		}
		if _, err := ms.Login(ctx, "invited@example.com", "invitation-1"); err == nil {
			t.Fatal("the invitation still signs in")
		}
		if _, err := ms.Login(ctx, "invited@example.com", "chosen-password-1"); err != nil {
			t.Fatalf("own password: %v", err)
		}
		// The CLI's reset makes the printed password an invitation too.
		pw, err := ms.ResetPassword(ctx, "invited@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, pw, ""); !hasCode(err, "password_reused") {
			t.Fatalf("reset password kept: %v", err)
		}
		if err := ms.SetOwnPassword(ctx, u.ID, "chosen-again-1", ""); err != nil {
			t.Fatalf("after reset: %v", err)
		}
	})
}
