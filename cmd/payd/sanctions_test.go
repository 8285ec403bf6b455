package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

func TestSanctionsCheck(t *testing.T) {
	list := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want []string
	}{
		{"hit from the environment", []string{"sanctions", "check", "Daniel", "Moreno"}, map[string]string{"PAYD_SANCTIONS_LIST": list}, 0,
			[]string{`"Daniel Moreno": hit`, "1.000  MORENO, Daniel (ofac_sdn entry 15102, individual, SDNTK)"}},
		{"alias by flag", []string{"sanctions", "check", "--list", list, "Hesa Trade Center"}, nil, 0, []string{"hit", `via alias "HESA TRADE CENTER"`}},
		{"clear", []string{"sanctions", "check", "--list", list, "Fatouma Ahmed"}, nil, 0, []string{`"Fatouma Ahmed": clear`}},
		{"json", []string{"sanctions", "check", "--list", list, "--json", "Daniel Moreno"}, nil, 0, []string{`"status": "hit"`, `"score": 1`}},
		{"no list", []string{"sanctions", "check", "Daniel Moreno"}, nil, 1, nil},
		{"no name", []string{"sanctions", "check", "--list", list}, nil, 2, nil},
		{"no subcommand", []string{"sanctions"}, nil, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			e := &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return c.env[k] }}
			if code := run(context.Background(), e, c.args); code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
