package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

// TestMain points the user config directory at a temporary one, so no test
// reads or writes the config file of whoever runs them.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "payd-cli-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestLoginProfiles: payd login checks the key and keeps it as a profile in
// a file only its owner can read; client commands then need no
// PAYD_API_KEY; PAYD_PROFILE picks another profile; logout forgets one.
func TestLoginProfiles(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	cfgPath := filepath.Join(t.TempDir(), "payd", "config.json")
	vars := func(extra ...string) map[string]string {
		m := map[string]string{"PAYD_CONFIG": cfgPath}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	// The key comes from standard input (a pipe: no prompt).
	login := func(v map[string]string, stdin string, args ...string) (int, string, string) {
		var out, errOut strings.Builder
		code := run(context.Background(), &env{stdout: &out, stderr: &errOut, stdin: strings.NewReader(stdin),
			getenv: func(k string) string { return v[k] }}, append([]string{"login"}, args...))
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := login(vars("PAYD_URL", e.URL), "sk_test_nope\n"); code != 1 || !strings.Contains(errOut, "not accepted") {
		t.Fatalf("a wrong key: exit %d %q", code, errOut)
	}
	if _, err := os.Stat(cfgPath); err == nil {
		t.Fatal("a refused login wrote the config file")
	}
	code, out, errOut := login(vars("PAYD_URL", e.URL), e.SK+"\n")
	if code != 0 || !strings.Contains(out, e.Merchant.MerchantID) || !strings.Contains(out, "test mode") || strings.Contains(out, e.SK) {
		t.Fatalf("login: exit %d %q %q", code, out, errOut)
	}
	st, err := os.Stat(cfgPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v %v", st, err)
	}
	// A second merchant's key as another profile (the key from PAYD_API_KEY).
	other := e.NewMerchant(merchants.CreateParams{Name: "Other Shop"})
	if code, _, errOut := login(vars("PAYD_URL", e.URL, "PAYD_API_KEY", other.SecretKeys[0]), "", "--profile", "other"); code != 0 {
		t.Fatalf("second login: %d %q", code, errOut)
	}
	// With no PAYD_API_KEY nor PAYD_URL, trigger uses the default profile.
	code, out, errOut = runPayd(vars(), "trigger", "--fixture", "payout.failed")
	var ev struct{ ID string }
	if json.Unmarshal([]byte(out), &ev); code != 0 || ev.ID == "" {
		t.Fatalf("trigger through the default profile: %d %q %q", code, out, errOut)
	}
	if r := e.Get("/v1/events/" + ev.ID); r.Status != 200 {
		t.Fatalf("the event went to another merchant: %d", r.Status)
	}
	// PAYD_PROFILE picks the other merchant: its event is not the first's.
	code, out, _ = runPayd(vars("PAYD_PROFILE", "other"), "trigger", "--fixture", "payout.failed")
	if json.Unmarshal([]byte(out), &ev); code != 0 || e.Get("/v1/events/"+ev.ID).Status != 404 {
		t.Fatalf("PAYD_PROFILE=other: exit %d, event %s visible to the first merchant", code, ev.ID)
	}
	if code, _, errOut := runPayd(vars("PAYD_PROFILE", "nope"), "trigger", "payout.failed"); code != 1 || !strings.Contains(errOut, "no such profile") {
		t.Fatalf("unknown profile: %d %q", code, errOut)
	}
	code, out, _ = runPayd(vars(), "profiles")
	if code != 0 || !regexp.MustCompile(`\* default .*`+e.Merchant.MerchantID).MatchString(out) || !strings.Contains(out, "other") ||
		strings.Contains(out, "sk_test_") {
		t.Fatalf("profiles: %d %q", code, out)
	}
	if code, _, _ := runPayd(vars(), "profiles", "--use", "other"); code != 0 {
		t.Fatal("profiles --use")
	}
	if code, out, _ := runPayd(vars(), "logout", "--profile", "other"); code != 0 || !strings.Contains(out, "other") {
		t.Fatalf("logout: %d %q", code, out)
	}
	if code, out, _ := runPayd(vars(), "profiles"); code != 0 || strings.Contains(out, "other") || strings.Contains(out, "*") {
		t.Fatalf("after logout: %q", out)
	}
	// A config file others can read is refused.
	if err := os.Chmod(cfgPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runPayd(vars(), "profiles"); code != 1 || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("a readable config: %d %q", code, errOut)
	}
}

// TestListenKeepsItsSecret: payd listen signs with the same secret at every
// run for one merchant and mode, another for another merchant, and a new one
// after --rotate-secret.
func TestListenKeepsItsSecret(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	other := e.NewMerchant(merchants.CreateParams{Name: "Other Shop"})
	secretOf := func(key string, args ...string) string {
		t.Helper()
		out := &syncBuf{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		v := map[string]string{"PAYD_URL": e.URL, "PAYD_API_KEY": key, "PAYD_CONFIG": cfgPath}
		go func() {
			done <- runListen(ctx, &env{stdout: out, stderr: io.Discard, getenv: func(k string) string { return v[k] }},
				append([]string{"--forward-to", "http://127.0.0.1:9/hooks"}, args...))
		}()
		waitUntil(t, 10*time.Second, "listen to be ready", func() bool { return strings.Contains(out.String(), "Ready!") })
		cancel()
		<-done
		return regexp.MustCompile(`whsec_[0-9A-Za-z]+`).FindString(out.String())
	}
	first := secretOf(e.SK)
	if first == "" || secretOf(e.SK) != first || secretOf(e.SK2) != first {
		t.Fatalf("the secret changed between runs for one merchant: %q", first)
	}
	if o := secretOf(other.SecretKeys[0]); o == "" || o == first {
		t.Fatalf("another merchant got the same secret: %q", o)
	}
	rotated := secretOf(e.SK, "--rotate-secret")
	if rotated == "" || rotated == first || secretOf(e.SK) != rotated {
		t.Fatalf("--rotate-secret: %q, then %q (first %q)", rotated, secretOf(e.SK), first)
	}
	if raw, _ := os.ReadFile(cfgPath); !strings.Contains(string(raw), rotated) || strings.Contains(string(raw), first) {
		t.Fatal("the config file does not hold the rotated secret alone")
	}
}
