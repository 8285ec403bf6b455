package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/providers/sim"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// TestProviderSimCommand runs `payd provider-sim` with every flag of
// docs/providers.md and checks it serves until interrupted.
func TestProviderSimCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &env{stdout: out, stderr: errOut, getenv: func(string) string { return "" }}, []string{"provider-sim",
			"--addr", "127.0.0.1:0", "--latency", "1ms", "--error-rate", "0", "--timeout-rate", "0", "--push-delay", "10ms",
			"--duplicate-callbacks", "--late-callbacks"})
	}()
	re := regexp.MustCompile(`listening on (http://\S+)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no address printed: %q %q", out.String(), errOut.String())
	}
	resp, err := http.Get(url + "/_sim/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if code := run(context.Background(), &env{stdout: out, stderr: errOut, getenv: func(string) string { return "" }},
		[]string{"provider-sim", "--error-rate", "2"}); code != 2 {
		t.Fatalf("error rate 2: exit %d", code)
	}
}

// TestProviderConnectAndReconcile: `payd provider connect` stores the
// connection sealed, the merchant goes live against the simulator, and
// `payd reconcile report` finds the day's report matching the ledger.
func TestProviderConnectAndReconcile(t *testing.T) {
	e := apptest.Start(t, storetest.SQLite)
	s := apptest.StartSim(t, sim.Config{PushDelay: 10 * time.Millisecond})
	vars := map[string]string{"PAYD_DATABASE_URL": e.Main.Config.DatabaseURL, "PAYD_SECRETS_KEY": e.Main.Config.SecretsKey, "PAYD_LOG_LEVEL": "warn"}
	payd := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), &env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
		return code, out.String(), errOut.String()
	}
	const apiKey, secret = "sk_provider_cli_test_key", "cb_cli_test_secret"
	file := filepath.Join(t.TempDir(), "wallet_c.json")
	cfg, _ := json.Marshal(map[string]string{"base_url": s.URL + "/wallet_c", "api_key": apiKey, "callback_secret": secret, "timeout": "5s"})
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	mid := e.Merchant.MerchantID
	if code, out, errOut := payd("provider", "connect", "--merchant", mid, "--provider", "wallet_c", "--config", file); code != 0 ||
		strings.Contains(out+errOut, apiKey) || strings.Contains(out+errOut, secret) {
		t.Fatalf("connect: exit %d\n%s\n%s", code, out, errOut)
	}
	var stored string
	if err := e.Main.DB.QueryRow(context.Background(), "SELECT config FROM provider_connections WHERE merchant_id = ?", mid).Scan(&stored); err != nil ||
		strings.Contains(stored, apiKey) || strings.Contains(stored, secret) {
		t.Fatalf("the connection is not sealed at rest: %v", err)
	}
	if code, _, errOut := payd("merchant", "kyc", "--merchant", mid, "--status", "approved"); code != 0 {
		t.Fatalf("kyc: %s", errOut)
	}
	k, err := e.Main.Merchants.CreateKey(context.Background(), mid, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: k.Secret, Headers: map[string]string{"Idempotency-Key": "cli-1"},
		Body: map[string]any{"amount": 400, "currency": "DJF", "provider": "wallet_c", "customer_msisdn": "+25377123123"}})
	id, _ := r.Map(t)["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + id, Key: k.Secret}).Map(t)["status"]
		if st == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("intent %s is %v", id, st)
		}
	}
	day := time.Now().UTC().Format(time.DateOnly)
	code, out, errOut := payd("reconcile", "report", "--merchant", mid, "--provider", "wallet_c", "--date", day, "--json")
	var rep struct {
		Matched       int   `json:"matched"`
		Discrepancies []any `json:"discrepancies"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Matched != 1 || len(rep.Discrepancies) != 0 {
		t.Fatalf("reconcile: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := payd("reconcile", "report", "--merchant", mid, "--provider", "wallet_c", "--date", day); code != 0 ||
		!strings.Contains(out, "1 matched, 0 discrepancies") {
		t.Fatalf("table: exit %d\n%s", code, out)
	}
	if code, _, _ := payd("reconcile", "report", "--merchant", mid); code != 2 {
		t.Fatalf("missing flags: exit %d", code)
	}
	e.RequireSecretsAbsent(apiKey, secret)
}
