package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
)

// TestTerminalSimulate runs `payd terminal simulate` against a running payd:
// consecutive runs advance the KSN and succeed (exit 0), a declined card
// prints the canceled intent and exits 1, bad flags exit 2.
func TestTerminalSimulate(t *testing.T) {
	e := apptest.Start(t, storetest.SQLite)
	state := t.TempDir()
	vars := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": e.SK, "PAYD_TERMINAL_STATE_DIR": state}
	simulate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }},
			append([]string{"terminal", "simulate"}, args...))
		return code, out.String(), errOut.String()
	}
	for _, model := range []string{"countertop", "mobile"} {
		reg := e.Post("/v1/terminals", map[string]any{"serial_number": "CLI-" + model, "model": model})
		id, _ := reg.Map(t)["id"].(string)
		if r := e.Post("/v1/terminals/"+id+"/activate", nil); r.Status != 200 {
			t.Fatalf("activate: %d %s", r.Status, r.Body)
		}
		for i := 0; i < 2; i++ {
			code, out, errOut := simulate("--terminal", id, "--card", "4242424242424242", "--amount", "500")
			var pi map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &pi) != nil || pi["status"] != "succeeded" || pi["amount_minor"] != 500.0 {
				t.Fatalf("%s run %d: exit %d\n%s\n%s", model, i, code, out, errOut)
			}
			pmd := pi["payment_method_details"].(map[string]any)["card_present"].(map[string]any)
			if pmd["terminal_id"] != id || pmd["last4"] != "4242" {
				t.Fatalf("card_present: %v", pmd)
			}
		}
		code, out, errOut := simulate("--terminal", id, "--card", "4000000000000002", "--amount", "500", "--currency", "DJF")
		if code != 1 || !strings.Contains(out, `"canceled"`) || !strings.Contains(errOut, "canceled") {
			t.Fatalf("%s decline: exit %d\n%s\n%s", model, code, out, errOut)
		}
		// Going back to counter 1 is a replay: refused, exit 1, an error message, no intent.
		code, out, errOut = simulate("--terminal", id, "--card", "4242424242424242", "--amount", "500", "--ksn-counter", "1")
		if code != 1 || out != "" || !strings.Contains(errOut, "ksn_replayed") {
			t.Fatalf("%s replay: exit %d\n%s\n%s", model, code, out, errOut)
		}
		if strings.Contains(out+errOut, "4242424242424242") {
			t.Fatal("the simulator printed the card number")
		}
	}
	if code, _, _ := simulate("--terminal", "term_x", "--amount", "5"); code != 2 {
		t.Fatalf("missing --card: exit %d", code)
	}
	vars["PAYD_API_KEY"] = ""
	if code, _, errOut := simulate("--terminal", "term_x", "--card", "4242424242424242", "--amount", "5"); code != 1 || !strings.Contains(errOut, "PAYD_API_KEY") {
		t.Fatalf("no key: exit %d %s", code, errOut)
	}
}
