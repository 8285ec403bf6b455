package abuse_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/testutil"
)

// spelledSeparators are put between the letters of a listed name: every
// ASCII punctuation and symbol character, the space, and the Unicode spaces,
// dashes and dots an evader can type. Each must leave the name readable.
func spelledSeparators() []string {
	var out []string
	for r := rune('!'); r <= '~'; r++ {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			out = append(out, string(r))
		}
	}
	return append(out, " ", "  ", "\u00A0", "\u2003", "\u3000", "\u2010", "\u2014", "\u2022", "\u00B7", "\u2026", "\u30FB", " - ", "_-_")
}

// spell writes each word of name with sep between its letters.
func spell(name, sep string) string {
	words := strings.Fields(name)
	for i, w := range words {
		words[i] = strings.Join(strings.Split(w, ""), sep)
	}
	return strings.Join(words, " ")
}

// TestAbuseSpelledNames: a payout to a listed name written with its letters
// separated, by any separator and in either name order, in capitals or not,
// is held for review, not paid; the same payee written plainly but unlisted
// is paid. Screening used to read "N-i-c-o-l-a-s M-a-d-u-r-o" as thirteen
// one-letter words and clear it.
func TestAbuseSpelledNames(t *testing.T) {
	list := filepath.Join(testutil.RepoRoot(t), "internal", "screening", "testdata", "evallist", "sdn.csv")
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 10_000_000}); r.Status != 201 {
			t.Fatalf("topup: %d %s", r.Status, r.Body)
		}
		var names []string
		for _, sep := range spelledSeparators() {
			names = append(names, spell("Nicolas Maduro", sep), spell("MADURO MOROS Nicolas", sep))
		}
		// Runs of single letters with nothing between the words at all.
		names = append(names, spell("NICOLASMADURO", " "), spell("AWEYSHASSAN", "."), spell("hassandahiraweys", "-"))
		for _, name := range names {
			r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377123456", "recipient_name": name})
			var p struct {
				Status    string `json:"status"`
				Screening struct {
					Status string `json:"status"`
				} `json:"screening"`
			}
			r.JSON(t, &p)
			if r.Status != 201 || p.Status != "held" || p.Screening.Status != "hit" {
				t.Errorf("payout to %q: %d, status %q, screening %q; want held on a hit", name, r.Status, p.Status, p.Screening.Status)
			}
		}
		r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377123456", "recipient_name": spell("Fatouma Houssein", "-")})
		if m := r.Map(t); r.Status != 201 || m["status"] == "held" {
			t.Errorf("unlisted spelled name: %d %s, want not held", r.Status, r.Body)
		}
	}, func(c *app.Config) { c.SanctionsList = list })
}
