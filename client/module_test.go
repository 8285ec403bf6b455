package client_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// consumerMain is a program of another module that uses the SDK as a
// merchant's code would: create a payment intent, confirm it.
const consumerMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/payd/payd/client"
)

func main() {
	ctx := context.Background()
	c := client.New(os.Getenv("PAYD_API_KEY"), client.WithBaseURL(os.Getenv("PAYD_URL")))
	pi, err := c.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{Amount: client.Int64(1500), Currency: "DJF",
		Provider: "bank_a", CustomerMSISDN: client.String("+25377123456")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	done, err := c.ConfirmPaymentIntent(ctx, pi.ID, &client.ConfirmPaymentIntentRequest{OTP: "123456"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(done.ID, pi.Status, done.Status)
}
`

// TestUsableFromAnotherModule builds a program in a module of its own, whose
// go.work uses it and this repository, the way docs/sdks.md tells a user to
// work against a checkout, and runs it against a real payd. It runs offline
// (GOPROXY=off: every module comes from the module cache, which go mod
// test filled) and without any -mod flag of GOFLAGS, which workspace mode
// refuses (-mod=mod would make the go command stop at once).
func TestUsableFromAnotherModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not installed (apt-get install golang): %v", err)
	}
	root := testutil.RepoRoot(t)
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(goMod)
	if goLine == nil {
		t.Fatal("no go directive in go.mod")
	}

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/consumer\n\n"+string(goLine)+"\n")
	write("main.go", consumerMain)
	write("go.work", string(goLine)+"\n\nuse (\n\t.\n\t"+root+"\n)\n")

	var flags []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") {
			flags = append(flags, f)
		}
	}
	env := testutil.GoBuildEnv("GOWORK="+filepath.Join(dir, "go.work"), "GOFLAGS="+strings.Join(flags, " "),
		"GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local")

	// The module cache holds what this test's own build needed, not every
	// module go.mod requires (a tool's, behind a build tag): fill it with
	// the ambient proxy first, so the offline build below is about the
	// workspace, not about what an earlier build happened to fetch.
	download := exec.Command(goBin, "mod", "download")
	download.Dir = root
	if out, err := download.CombinedOutput(); err != nil {
		t.Fatalf("go mod download in the repository: %v\n%s", err, out)
	}

	start := time.Now()
	bin := filepath.Join(dir, "consumer")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a module of its own: %v\n%s", err, out)
	}
	t.Logf("built the consumer module in %v", time.Since(start).Round(time.Millisecond))

	e := apptest.Start(t, storetest.SQLite)
	run := exec.CommandContext(ctx, bin)
	run.Env = append(os.Environ(), "PAYD_URL="+e.URL, "PAYD_API_KEY="+e.SK)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the consumer: %v\n%s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 3 || !strings.HasPrefix(f[0], "pi_") || f[1] != "requires_action" || f[2] != "succeeded" {
		t.Fatalf("the consumer printed %q, want a pi_ id, requires_action and succeeded", out)
	}
}
