package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/testutil"
)

// runPayd runs payd's command line in-process with vars as the environment.
func runPayd(vars map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
	return code, out.String(), errOut.String()
}

// TestHelpListsFlagsAndVariables: `payd --help` and `payd COMMAND --help`
// exit 0 on stdout, and each command's help names every flag it accepts and
// every variable it reads.
func TestHelpListsFlagsAndVariables(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if code, out, _ := runPayd(nil, args...); code != 0 || !strings.Contains(out, "merchant") {
			t.Fatalf("payd %v: exit %d\n%s", args, code, out)
		}
	}
	for _, path := range commandPaths() {
		t.Run(path, func(t *testing.T) {
			u, ok := usages[path]
			if !ok || u.synopsis == "" {
				t.Fatalf("no usage described for %q", path)
			}
			code, out, errOut := runPayd(nil, append(strings.Fields(path), "--help")...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: payd "+path) {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
			}
			for _, v := range u.vars {
				if variables[v] == "" {
					t.Errorf("variable %s is not described", v)
				}
				if !strings.Contains(out, "  "+v+"\n") {
					t.Errorf("help does not list %s", v)
				}
			}
			for _, word := range strings.Fields(u.synopsis) {
				word = strings.Trim(word, "[]|")
				if strings.HasPrefix(word, "--") && !strings.Contains(out, "\n  "+strings.SplitN(word, "=", 2)[0]) {
					t.Errorf("synopsis names %s but the flags do not", word)
				}
			}
		})
	}
	for _, group := range []string{"merchant", "key", "user"} {
		if code, out, _ := runPayd(nil, group, "--help"); code != 0 || !strings.Contains(out, "payd "+group+" ") {
			t.Errorf("payd %s --help: exit %d\n%s", group, code, out)
		}
	}
}

// TestBadFlagIsAUsageError: an unknown flag exits 2 with the error and the
// help on stderr.
func TestBadFlagIsAUsageError(t *testing.T) {
	code, out, errOut := runPayd(nil, "merchant", "create", "--nmae", "x")
	if code != 2 || out != "" || !strings.Contains(errOut, "-nmae") || !strings.Contains(errOut, "usage: payd merchant create") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

func TestDidYouMean(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"mercant"}, `did you mean "merchant"?`},
		{[]string{"serv"}, `did you mean "serve"?`},
		{[]string{"lisen"}, `did you mean "listen"?`},
		{[]string{"merchant", "lst"}, `did you mean "list"?`},
		{[]string{"key", "crate"}, `did you mean "create"?`},
	}
	for _, c := range cases {
		code, _, errOut := runPayd(nil, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("payd %v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	if code, _, errOut := runPayd(nil, "xyzzyplugh"); code != 2 || strings.Contains(errOut, "did you mean") {
		t.Errorf("a word like no command got a suggestion: %q", errOut)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runPayd(nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "payd ") || !strings.Contains(out, "go1.") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

var updateCLIDocs = os.Getenv("PAYD_UPDATE_CLI_DOCS") == "1"

// TestCLIReference: docs/cli.md is exactly what the commands' --help says.
func TestCLIReference(t *testing.T) {
	var buf bytes.Buffer
	if err := writeReference(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(testutil.RepoRoot(t), "docs", "cli.md")
	if updateCLIDocs {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatal("docs/cli.md differs from the commands' --help: run PAYD_UPDATE_CLI_DOCS=1 go test ./cmd/payd -run TestCLIReference")
	}
}

// TestMerchantListAndResetPassword drives `merchant list` and `user
// reset-password` against a fresh SQLite database with no key configured
// (the key file beside it is made on first use).
func TestMerchantListAndResetPassword(t *testing.T) {
	vars := map[string]string{"PAYD_DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "payd.db"), "PAYD_LOG_LEVEL": "error"}
	if code, out, _ := runPayd(vars, "merchant", "list", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("empty list: exit %d %q", code, out)
	}
	code, out, errOut := runPayd(vars, "merchant", "create", "--name", "Listed", "--json")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	var created struct {
		MerchantID string `json:"merchant_id"`
		Portal     struct{ Email, Password string }
	}
	json.Unmarshal([]byte(out), &created)
	code, out, _ = runPayd(vars, "merchant", "list", "--json")
	var list []struct{ ID, Name string }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0].ID != created.MerchantID || list[0].Name != "Listed" {
		t.Fatalf("list: exit %d %v %q", code, err, out)
	}
	if code, out, _ := runPayd(vars, "merchant", "list"); code != 0 || !strings.Contains(out, created.MerchantID) || !strings.Contains(out, "Listed") {
		t.Fatalf("table: %q", out)
	}

	code, out, errOut = runPayd(vars, "user", "reset-password", "--email", strings.ToUpper(created.Portal.Email))
	if code != 0 {
		t.Fatalf("reset: %d %s", code, errOut)
	}
	password := out[strings.LastIndex(out, " ")+1:]
	password = strings.TrimSpace(password)
	if password == "" || password == created.Portal.Password {
		t.Fatalf("reset printed %q", out)
	}
	cfg, _ := app.ConfigFromEnv(func(k string) string { return vars[k] })
	m := &app.Main{Config: cfg}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Merchants.Login(context.Background(), created.Portal.Email, password); err != nil {
		t.Fatalf("the new password does not sign in: %v", err)
	}
	if _, err := m.Merchants.Login(context.Background(), created.Portal.Email, created.Portal.Password); err == nil {
		t.Fatal("the old password still signs in")
	}
	if code, _, errOut := runPayd(vars, "user", "reset-password", "--email", "nobody@example.com"); code != 1 || !strings.Contains(errOut, "no such user") {
		t.Fatalf("unknown email: exit %d %q", code, errOut)
	}
}
