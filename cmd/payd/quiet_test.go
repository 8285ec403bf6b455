package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// TestCommandsOtherThanServeAreQuiet: a command other than serve prints its
// own output and nothing on standard error when all goes well: not serve's
// warning about a missing sanctions list, nor the services' info lines (a
// list loaded). A real error still reaches standard error.
func TestCommandsOtherThanServeAreQuiet(t *testing.T) {
	dir := t.TempDir()
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	for name, vars := range map[string]map[string]string{
		"no sanctions list": {"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "a.db")},
		"a sanctions list":  {"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "b.db"), "PAYD_SANCTIONS_LIST": list},
		"text logs":         {"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "c.db"), "PAYD_LOG_FORMAT": "text"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{"migrate"}, {"merchant", "list"}, {"merchant", "create", "--name", "Quiet", "--json"}, {"merchant", "list", "--json"}} {
				code, out, errOut := runPayd(vars, args...)
				if code != 0 {
					t.Fatalf("payd %v: exit %d, stderr %q", args, code, errOut)
				}
				if errOut != "" {
					t.Errorf("payd %v wrote to stderr: %q", args, errOut)
				}
				if args[0] == "merchant" && out == "" {
					t.Errorf("payd %v printed nothing", args)
				}
			}
			code, _, errOut := runPayd(vars, "merchant", "kyc", "--merchant", "mer_doesnotexist", "--status", "approved")
			if code == 0 || errOut == "" {
				t.Errorf("a failing command: exit %d, stderr %q; want an error on stderr", code, errOut)
			}
		})
	}
	// PAYD_LOG_LEVEL set by the operator is honoured: info lines come back.
	vars := map[string]string{"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "d.db"), "PAYD_SANCTIONS_LIST": list, "PAYD_LOG_LEVEL": "info"}
	if code, _, errOut := runPayd(vars, "merchant", "list"); code != 0 || !strings.Contains(errOut, "sanctions list loaded") {
		t.Errorf("PAYD_LOG_LEVEL=info: exit %d, stderr %q; want the list's info line", code, errOut)
	}
	// A bad PAYD_LOG_FORMAT is refused before anything runs.
	vars = map[string]string{"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(dir, "e.db"), "PAYD_LOG_FORMAT": "xml"}
	if code, _, errOut := runPayd(vars, "merchant", "list"); code == 0 || !strings.Contains(errOut, "PAYD_LOG_FORMAT") {
		t.Errorf("PAYD_LOG_FORMAT=xml: exit %d, stderr %q; want a refusal naming the variable", code, errOut)
	}
}
