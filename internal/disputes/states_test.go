package disputes

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/statemachine/statemachinetest"
)

// TestTransitionTable pins the dispute state machine: every allowed move,
// and nothing else; won and lost have no way out.
func TestTransitionTable(t *testing.T) {
	wantMoves := map[[2]Status]bool{
		{NeedsResponse, NeedsResponse}: true, // save
		{NeedsResponse, UnderReview}:   true, // submit
		{NeedsResponse, Lost}:          true, // close (accept), or the bank decides
		{NeedsResponse, Won}:           true, // the bank decides without evidence (live)
		{UnderReview, Won}:             true,
		{UnderReview, Lost}:            true,
	}
	for _, a := range Statuses {
		for _, b := range Statuses {
			if got := machine.Allowed(a, b); got != wantMoves[[2]Status{a, b}] {
				t.Errorf("%s → %s allowed = %v", a, b, got)
			}
		}
		if a.Terminal() {
			for _, b := range Statuses {
				if machine.Allowed(a, b) {
					t.Errorf("terminal %s leads to %s", a, b)
				}
			}
		}
	}
	if accept.Cond() != "status IN ('needs_response')" || win.Cond() != "status IN ('needs_response', 'under_review')" {
		t.Errorf("cas %q %q", accept.Cond(), win.Cond())
	}
	for _, s := range Statuses {
		if !slices.Contains(machine.States(), s) {
			t.Errorf("the table does not name %s", s)
		}
	}
	statemachinetest.Check(t, &machine, "disputes")
	if KindDispute != ledger.KindDispute {
		t.Errorf("the dispute kind %q is not the ledger's overdraw kind %q", KindDispute, ledger.KindDispute)
	}
}

// TestParseEvidence pins the evidence rules.
func TestParseEvidence(t *testing.T) {
	cases := []struct {
		body, param string
	}{
		{`{"customer_name":"A"}`, ""},
		{`{"customer_name":null}`, ""},
		{`null`, ""},
		{`{}`, ""},
		{`{"receipt_text":"` + strings.Repeat("x", MaxEvidenceText) + `"}`, ""},
		{`{"receipt_text":"` + strings.Repeat("x", MaxEvidenceText+1) + `"}`, "evidence.receipt_text"},
		{`{"other":"x"}`, "evidence.other"},
		{`{"customer_email":1}`, "evidence.customer_email"},
		{`{"customer_email":"a\u0000b"}`, "evidence.customer_email"},
		{`[]`, "evidence"},
		{`"x"`, "evidence"},
	}
	for _, c := range cases {
		_, err := ParseEvidence(json.RawMessage(c.body))
		got := ""
		if e := errs.As(err); e != nil {
			got = e.Param
		} else if err != nil {
			t.Fatalf("%.40s: %v", c.body, err)
		}
		if got != c.param {
			t.Errorf("%.40s: param %q, want %q", c.body, got, c.param)
		}
	}
}

// FuzzParseEvidence: any input is parsed or refused with a 400 naming a
// field; what is accepted holds known fields of at most MaxEvidenceText
// characters of valid UTF-8.
func FuzzParseEvidence(f *testing.F) {
	for _, s := range []string{`{"customer_name":"A"}`, `{"x":1}`, `null`, `{"receipt_text":null}`, `[1]`, `{"uncategorized_text":"winning_evidence"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ParseEvidence(b)
		if err != nil {
			e := errs.As(err)
			if e == nil || e.Kind != errs.KindInvalid || !strings.HasPrefix(e.Param, "evidence") {
				t.Fatalf("%q: %v", b, err)
			}
			return
		}
		var ev Evidence
		u.apply(&ev)
		for k, v := range u {
			if ev.field(k) == nil {
				t.Fatalf("unknown field %q accepted", k)
			}
			if v != nil && (!utf8.ValidString(*v) || utf8.RuneCountInString(*v) > MaxEvidenceText) {
				t.Fatalf("bad text accepted for %s", k)
			}
		}
	})
}
