package payouts_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/testutil"
)

// obfuscatedName is a row of internal/screening/testdata/obfuscations.csv.
type obfuscatedName struct {
	kind, name string
	entry      int
}

// readObfuscations reads the disguised listed names the screening package
// tests, so that payouts are shown to catch the same ones.
func readObfuscations(t *testing.T) []obfuscatedName {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "screening", "testdata", "obfuscations.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []obfuscatedName
	for _, r := range rows[1:] {
		name, err := strconv.Unquote(`"` + r[1] + `"`)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := strconv.Atoi(r[2])
		out = append(out, obfuscatedName{kind: r[0], name: name, entry: id})
	}
	return out
}

// withEvalList configures the small OFAC-format list shipped with the
// screening package (no shared data needed).
func withEvalList(t *testing.T) apptest.Option {
	path := filepath.Join(testutil.RepoRoot(t), "internal", "screening", "testdata", "evallist", "sdn.csv")
	return func(c *app.Config) { c.SanctionsList = path }
}

// TestPayoutScreeningObfuscations: every disguise of a listed name (soft
// hyphens, zero-width and other invisible characters, hyphens inside words,
// full-width letters, Cyrillic and Greek homoglyphs, words divided
// differently) is held on a single payout and on an items batch row.
func TestPayoutScreeningObfuscations(t *testing.T) {
	t.Parallel()
	names := readObfuscations(t)
	apptest.ForEachEngine(t, func(t *testing.T, env *apptest.Env) {
		e := asNewMerchant(t, env)
		topup(t, e, "DJF", 1_000_000)
		items := []map[string]any{}
		for _, o := range names {
			r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377123456", "recipient_name": o.name})
			if r.Status != 201 {
				t.Fatalf("%s: create: %d %s", o.kind, r.Status, r.Body)
			}
			var p payout
			r.JSON(t, &p)
			if p.Status != "held" || p.Screening.Status != "hit" || !matchesEntry(p, o.entry) {
				t.Errorf("%s (%q): payout %s, screening %+v; want held on entry %d", o.kind, o.name, p.Status, p.Screening, o.entry)
			}
			items = append(items, map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456", "recipient_name": o.name})
		}
		items = append(items, map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377123456", "recipient_name": "Fatouma Ahmed Houssein"})
		r := postBulk(e, e.SK, map[string]any{"items": items}, "")
		if r.Status != 202 {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
		var b batch
		r.JSON(t, &b)
		held := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE batch_id = ? AND status = 'held'", b.ID)
		if held != len(names) {
			t.Errorf("batch: %d rows held, want %d (every disguised name, not the clear one)", held, len(names))
		}
		verifyLedger(t, e)
	}, withEvalList(t))
}

func matchesEntry(p payout, id int) bool {
	for _, m := range p.Screening.Matches {
		if m.EntryID == id {
			return true
		}
	}
	return false
}

// TestLivePayoutsNeedAList: with no sanctions list loaded a live payout or
// batch is refused with 503 screening_unavailable and nothing is written;
// test mode still works (not_screened). With a list, the same live request
// gets past screening (and fails later, on the unconnected provider).
func TestLivePayoutsNeedAList(t *testing.T) {
	t.Parallel()
	body := map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
		"recipient_msisdn": "+25377123456", "recipient_name": "Fatouma Ahmed Houssein"}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if !strings.Contains(e.Logs.String(), "no sanctions list configured") {
			t.Errorf("start did not warn that no list is configured:\n%s", e.Logs.String())
		}
		live := e.LiveKey(t, "wallet_b")
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: live, Body: body})
		if r.Status != 503 || r.ErrorCode() != "screening_unavailable" {
			t.Fatalf("live payout without a list: %d %s", r.Status, r.Body)
		}
		r = postBulk(e, live, map[string]any{"items": []any{body}}, "")
		if r.Status != 503 || r.ErrorCode() != "screening_unavailable" {
			t.Fatalf("live batch without a list: %d %s", r.Status, r.Body)
		}
		if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE livemode = ?", true); n != 0 {
			t.Fatalf("%d live payouts written", n)
		}
		topup(t, e, "DJF", 10_000)
		r = e.Post("/v1/payouts", body)
		var p payout
		r.JSON(t, &p)
		if r.Status != 201 || p.Screening.Status != "not_screened" {
			t.Fatalf("test-mode payout without a list: %d %s", r.Status, r.Body)
		}
	})
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.LiveKey(t, "wallet_b"), Body: body})
		if r.ErrorCode() == "screening_unavailable" || r.Status == 201 {
			t.Fatalf("live payout with a list: %d %s", r.Status, r.Body)
		}
	}, withEvalList(t))
}

// TestPayoutScreeningVariations: a payout to a listed name written with its
// given names as initials, with extra middle names, or as one distinctive
// surname is held, and the payout's screening result says which rule matched
// (explanation); a payout to an everyday name of the same shape is not held.
func TestPayoutScreeningVariations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, explanation string
		entry             int
	}{
		{"N. Maduro Moros", "given_names_as_initials", 22790},
		{"J. L. Rizo Moreno", "given_names_as_initials", 4424},
		{"Igor Ivanovich Petrovich Sechin", "extra_names", 16692},
		{"Deripaska", "surname_only", 24283},
		{"D-e-r-i-p-a-s-k-a O-l-e-g", "letters_spelled_out", 24283},
	}
	apptest.ForEachEngine(t, func(t *testing.T, env *apptest.Env) {
		e := asNewMerchant(t, env)
		topup(t, e, "DJF", 1_000_000)
		create := func(name string) payout {
			r := e.Post("/v1/payouts", map[string]any{"amount": 100, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377123456", "recipient_name": name})
			if r.Status != 201 {
				t.Fatalf("%q: create: %d %s", name, r.Status, r.Body)
			}
			var p payout
			r.JSON(t, &p)
			return p
		}
		for _, c := range cases {
			p := create(c.name)
			found := false
			for _, m := range p.Screening.Matches {
				found = found || m.EntryID == c.entry && slices.Contains(m.Explanation, c.explanation)
			}
			if p.Status != "held" || !found {
				t.Errorf("%q: payout %s, screening %+v; want held on %d explained %s", c.name, p.Status, p.Screening, c.entry, c.explanation)
			}
		}
		for _, name := range []string{"M. Hernandez", "Hernandez", "Maria Isabel Lopez Moreno"} {
			if p := create(name); p.Status == "held" {
				t.Errorf("%q: held (%+v), want not held", name, p.Screening)
			}
		}
		verifyLedger(t, e)
	}, withEvalList(t))
}
