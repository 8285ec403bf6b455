package merchants_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func isEmailInvalid(err error) bool {
	e := errs.As(err)
	return e != nil && e.Kind == errs.KindInvalid && e.Param == "email"
}

// TestNormalizeEmail: NFKC and lower case make look-alikes one address;
// control and invisible format characters are refused naming email.
func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{
		" Ana@Example.COM ":      "ana@example.com",
		"ＡＮＡ＠ｅｘａｍｐｌｅ．ｃｏｍ":        "ana@example.com",  // full-width
		"ana@ex\u0061\u0301.com": "ana@ex\u00e1.com", // decomposed á composes
		"ﬁn@example.com":         "fin@example.com",  // ligature
	} {
		got, err := merchants.NormalizeEmail(in)
		if err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"ana@example.com\r\nBcc: x@y", "ana@example.com\n", "\rana@example.com", "ana\x00@example.com",
		"ana\t@example.com", "ana\u200b@example.com", "\ufeffana@example.com", "ana\u0085@example.com", "ana\u2028@example.com",
		"ana\xff@example.com", strings.Repeat("a", 250) + "@x.io"} {
		if _, err := merchants.NormalizeEmail(in); !isEmailInvalid(err) {
			t.Errorf("NormalizeEmail(%q): %v, want invalid email", in, err)
		}
	}
}

// TestUserEmailNormalisedEverywhere: create refuses CR/LF, a look-alike of an
// existing address is the same user (email_taken), and login and password
// reset find the user through any form of the address.
func TestUserEmailNormalisedEverywhere(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms, m := newMerchant(t, db, "Email Norm")
		if _, err := ms.CreateUser(ctx, m.MerchantID, "eve@example.com\r\nX-Injected: 1", "correct horse battery", "viewer"); !isEmailInvalid(err) {
			t.Fatalf("create with CRLF: %v, want invalid email", err)
		}
		u, err := ms.CreateUser(ctx, m.MerchantID, "Ana@Example.com", "correct horse battery", "viewer")
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "ana@example.com" {
			t.Fatalf("stored %q", u.Email)
		}
		_, err = ms.CreateUser(ctx, m.MerchantID, "ＡＮＡ＠ｅｘａｍｐｌｅ．ｃｏｍ", "another password", "admin")
		if e := errs.As(err); e == nil || e.Code != "email_taken" {
			t.Fatalf("full-width duplicate: %v, want email_taken", err)
		}
		if got, err := ms.Login(ctx, "ａｎａ@EXAMPLE.com", "correct horse battery"); err != nil || got.ID != u.ID {
			t.Fatalf("login with full-width form: %v %v", got, err)
		}
		if _, err := ms.Login(ctx, "ana@example.com\n", "correct horse battery"); !isEmailInvalid(err) {
			t.Fatalf("login with LF: %v, want invalid email", err)
		}
		pw, err := ms.ResetPassword(ctx, "ＡＮＡ@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ms.Login(ctx, "ana@example.com", pw); err != nil || got.ID != u.ID {
			t.Fatalf("login after reset: %v %v", got, err)
		}
		if _, err := ms.ResetPassword(ctx, "ana@example.com\r"); !isEmailInvalid(err) {
			t.Fatalf("reset with CR: %v, want invalid email", err)
		}
	})
}
