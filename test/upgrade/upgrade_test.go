// Package upgrade drives a rolling upgrade of real payd processes: the
// previous release's binary, built from git history, serves keyed load on a
// fresh database; this tree's binary applies its migrations while the old
// processes serve, then replaces them one by one (SIGTERM, wait, start the
// new binary, wait for /readyz) while the load goes on. Afterwards no
// answer may have been 5xx, every acknowledged request's effect must be in
// the database exactly once, every event delivered and the ledger verified.
//
// It proves that the migrations since the previous release only expand the
// schema (docs/architecture.md, "Rolling upgrades"). It needs the git
// history of the repository (a shallow clone skips it, saying how to fetch
// it; under CI=true that fails instead). By default it runs a small load
// and fits in about a minute and a half; -upgrade.long runs ten times more
// requests around each step.
package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
	"github.com/payd/payd/internal/testutil/keyedload"
)

// previousRelease is the commit whose payd plays the release before this
// tree's: main as it stood before migrations 2200 to 2260 landed (the merge
// of test/ha). Since then the schema has gained payment_intents.invoice_id
// (added and back-filled on the table the load writes), two columns of
// users and three indexes; this tree may add more.
//
// At each release, set it to the commit of the release before the one being
// made (its tag's commit: `git rev-list -n 1 <tag>`), so that the test runs
// the binary operators are upgrading from against every migration since.
// Until payd tags releases, a release is the state of main before the
// newest migration landed: `git log --first-parent -m --diff-filter=A
// --format=%P -1 main -- internal/store/migrations` prints that merge's
// parents, the first of which is the commit to set here (pick an older one
// when that leaves the schema unchanged but for an index, as it does today).
const previousRelease = "fc38a2eb599cbfd0d3a7161f99babb9feae36079"

// long asks for ten times the requests around each step.
var long = flag.Bool("upgrade.long", false, "send ten times more keyed requests around each step of the upgrade")

const secretsKey = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"

// TestRollingUpgrade: on PostgreSQL two processes of the previous release
// are replaced one by one; on SQLite (one process per database) the one
// process is, its clients waiting while none is up.
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds two payd binaries and upgrades one to the other under load")
	}
	// Built once, for both engines, when the first engine that runs needs
	// them (without a PostgreSQL server its half skips before).
	dir := t.TempDir() // the parent's: the binaries outlive the first subtest
	var once sync.Once
	var oldBin, newBin, skip string
	var err error
	binaries := func(t *testing.T) (string, string) {
		t.Helper()
		once.Do(func() {
			if oldBin, skip, err = buildPrevious(t, dir); skip != "" || err != nil {
				return
			}
			start := time.Now()
			newBin = filepath.Join(filepath.Dir(oldBin), "payd-new")
			build := exec.Command("go", "build", "-trimpath", "-o", newBin, "./cmd/payd")
			build.Dir, build.Env = testutil.RepoRoot(t), testutil.GoBuildEnv()
			if out, e := build.CombinedOutput(); e != nil {
				err = fmt.Errorf("go build: %v\n%s", e, out)
				return
			}
			t.Logf("this tree's payd built in %v", time.Since(start).Round(time.Millisecond))
		})
		switch {
		case err != nil:
			t.Fatal(err)
		case skip != "" && os.Getenv("CI") == "true":
			t.Fatal(skip)
		case skip != "":
			t.Skip(skip)
		}
		return oldBin, newBin
	}
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			url := storetest.URL(t, engine)
			oldBin, newBin := binaries(t)
			n := 2
			if engine == storetest.SQLite {
				n = 1
			}
			rollingUpgrade(t, url, oldBin, newBin, n)
		})
	}
}

// buildPrevious builds previousRelease's cmd/payd from the repository's
// history (git archive into dir, go build there with the module cache and
// proxy this build uses) and returns the binary's path; or
// why it cannot (skip: the history is not there).
func buildPrevious(t *testing.T, dir string) (bin, skip string, err error) {
	root := testutil.RepoRoot(t)
	// An ancestor of HEAD, not merely an object this checkout holds: a
	// commit left from a branch that was rebased or dropped is found here
	// but not in a fresh clone, where the test would then skip (and fail
	// under CI=true).
	out, err := exec.Command("git", "-C", root, "merge-base", "--is-ancestor", previousRelease, "HEAD").CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return "", "", fmt.Errorf("previousRelease %.12s is not in the history of HEAD: a fresh clone would not have it; set it to a commit of this branch", previousRelease)
	default:
		shallow, _ := exec.Command("git", "-C", root, "rev-parse", "--is-shallow-repository").Output()
		return "", fmt.Sprintf("git history unavailable: the rolling-upgrade test builds payd at commit %.12s, which this checkout does not have "+
			"(shallow clone: %s; %v: %s); fetch it with `git fetch --unshallow` to run the test",
			previousRelease, strings.TrimSpace(string(shallow)), err, strings.TrimSpace(string(out))), nil
	}
	start := time.Now()
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return "", "", err
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, previousRelease, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("git archive %s: %v\n%s", previousRelease, err, out)
	}
	bin = filepath.Join(dir, "payd-previous")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/payd")
	build.Dir = src
	// The old tree's own go.mod, the local toolchain, no workspace.
	build.Env = testutil.GoBuildEnv("GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build of %s: %v\n%s", previousRelease, err, out)
	}
	os.RemoveAll(src) // the binary is all the test needs
	t.Logf("payd %.12s (the previous release) built in %v", previousRelease, time.Since(start).Round(time.Millisecond))
	return bin, "", nil
}

// rollingUpgrade runs one upgrade on the empty database at dbURL, with n
// processes.
func rollingUpgrade(t *testing.T, dbURL, oldBin, newBin string, n int) {
	env := []string{"PAYD_DATABASE_URL=" + dbURL, "PAYD_SECRETS_KEY=" + secretsKey, "PAYD_RATE_LIMIT=0",
		"PAYD_PUBLIC_RATE_LIMIT=0", "PAYD_DB_MAX_CONNS=8", "PAYD_LOG_LEVEL=warn", "PAYD_SANCTIONS_LIST=", "PAYD_DEMO=false",
		"PAYD_SANDBOX_TIMEOUT_DELAY=50ms", "PAYD_WEBHOOK_RETRY_SCHEDULE=1s,1s,2s,2s,5s,5s,10s,30s"}
	// The previous release migrates the empty database and makes the
	// merchant, as it did in production before the upgrade.
	old := testutil.NewProcess(t, oldBin, env...)
	old.Run("migrate")
	var m struct {
		SecretKeys []string `json:"secret_keys"`
	}
	if err := json.Unmarshal(old.Run("merchant", "create", "--name", "Upgrade test", "--json"), &m); err != nil || len(m.SecretKeys) == 0 {
		t.Fatalf("merchant create: %v", err)
	}
	f := &keyedload.Fleet{}
	for i := range n {
		f.Procs = append(f.Procs, keyedload.NewProc(t, oldBin, fmt.Sprintf("payd %c", 'a'+i), env))
	}
	for _, p := range f.Procs {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range f.Procs {
			p.Kill()
		}
		if t.Failed() {
			t.Logf("logs:\n%s", f.Logs())
		}
	})
	c := keyedload.NewClient(t, f, m.SecretKeys[0])
	hooks := keyedload.NewReceiver(t)
	if a, ok := c.Post("endpoint", "/v1/webhook_endpoints", map[string]any{"url": hooks.URL, "enabled_events": []string{"*"}}); !ok || a.Status != 201 {
		t.Fatalf("webhook endpoint: %d %s", a.Status, a.Body)
	}
	if a, ok := c.Post("topup", "/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 100_000_000}); !ok || a.Status != 201 {
		t.Fatalf("top-up: %d %s", a.Status, a.Body)
	}
	c.Reset() // the set-up's requests are not the load's

	// The load: rounds of keyed requests, one after another, until the
	// upgrade is over, then one more round on the new processes alone.
	step := int64(200) // answered requests between two steps of the upgrade
	round := keyedload.Workload{Intents: 20, Payouts: 20}
	if *long {
		step, round = 2000, keyedload.Workload{Intents: 200, Payouts: 200}
	}
	upgraded := make(chan struct{})
	var mu sync.Mutex
	total, res := keyedload.Workload{}, &keyedload.Result{Intents: map[string]string{}, Payouts: map[string]string{}}
	loadDone := make(chan struct{})
	loadStart := time.Now()
	go func() {
		defer close(loadDone)
		last := false
		for i := 0; ; i++ {
			select {
			case <-upgraded:
				last = true
			default:
			}
			w := round
			w.Prefix = fmt.Sprintf("r%d-", i)
			r := keyedload.Drive(t, c, w, 8, nil, 0)
			mu.Lock()
			total.Intents += w.Intents
			total.Payouts += w.Payouts
			res.Add(r)
			mu.Unlock()
			if last || t.Failed() {
				return
			}
		}
	}()
	// stop ends the load (at once when the test failed) and waits for it.
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if t.Failed() {
			c.Abort()
		}
		close(upgraded)
		<-loadDone
	}
	defer stop()
	// after waits until the client has had step more answers than at; a
	// 5xx answer ends the test at once (a step broke the old or the new
	// binary: the log lines of the first ones say how).
	after := func(at int64, what string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); c.Answered.Load() < at+step; time.Sleep(5 * time.Millisecond) {
			if n := c.Fives.Load(); n > 0 {
				t.Errorf("%s: %d answers 5xx:%s", what, n, c.FiveAnswers())
				stop()
				t.FailNow()
			}
			select {
			case <-loadDone: // a request of the load failed the test
				t.Errorf("%s: the load ended early", what)
				stop()
				t.FailNow()
			default:
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: %d answers in 60 s, want %d", what, c.Answered.Load()-at, step)
				stop()
				t.FailNow()
			}
		}
	}
	log := func(format string, args ...any) {
		t.Helper()
		t.Logf("%6.2fs  %d answered: %s", time.Since(loadStart).Seconds(), c.Answered.Load(), fmt.Sprintf(format, args...))
	}

	after(0, "the previous release before the migrations")
	log("the previous release serving on its own schema")
	// 1. The new binary migrates while the old processes serve.
	migrator := testutil.NewProcess(t, newBin, env...)
	began := time.Now()
	migrator.Run("migrate")
	log("this tree's migrations applied in %v while %d process(es) of the previous release serve", time.Since(began).Round(time.Millisecond), n)
	// The old processes still say they are ready on the new schema (a load
	// balancer would otherwise take them out before their replacements are
	// up).
	for _, p := range f.Procs {
		if err := ready(p.URL); err != nil {
			t.Errorf("%s (the previous release) on the new schema: %v", p.Name, err)
		}
	}
	// The previous release's commands too (payd ledger verify, run from
	// cron or a probe, may be upgraded last).
	old.Run("ledger", "verify")
	after(c.Answered.Load(), "the previous release on the new schema")
	log("the previous release served on the new schema")
	// 2. Each process replaced in turn.
	for _, p := range f.Procs {
		began := time.Now()
		if err := p.Replace(newBin, 30*time.Second); err != nil {
			t.Errorf("replace %s: %v", p.Name, err)
			stop()
			t.FailNow()
		}
		log("%s replaced by this tree's payd in %v", p.Name, time.Since(began).Round(time.Millisecond))
		after(c.Answered.Load(), "after replacing "+p.Name)
	}
	stop()
	log("the load is over: %s", c.Summary())

	n503, other, samples := c.FiveCounts()
	if n503+other > 0 {
		t.Errorf("%d answers 503 and %d other 5xx during the upgrade; want none:%s\n%s", n503, other, c.FiveAnswers(), samples)
	}
	// A send can still find a process's listener closed: the client picked
	// the process just before it was taken out of the choice, or sent on a
	// kept-alive connection the stopping server closed. It gets no answer
	// (nothing of it ran) and goes to the next process, as a load balancer
	// retries a refused connection; a request in flight always finishes.
	if d := c.Dropped.Load(); d > 0 {
		log("%d sends found a stopping process's connection closed and went to the next", d)
	}
	for _, p := range f.Procs {
		if p.Bin != newBin || !p.Running() || p.Starts() != 2 {
			t.Errorf("%s: binary %s, running %v, started %d times; want this tree's, running, started twice",
				p.Name, filepath.Base(p.Bin), p.Running(), p.Starts())
		}
		for _, level := range []string{`"level":"ERROR"`, "level=ERROR"} {
			if lines := p.LogLines(level); len(lines) > 0 {
				t.Errorf("%s logged %d errors, the first: %s", p.Name, len(lines), lines[0])
			}
		}
	}
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mu.Lock()
	defer mu.Unlock()
	keyedload.WaitSettled(t, db, 30*time.Second)
	keyedload.CheckEffects(t, db, total, res)
	keyedload.CheckAnswers(t, db, c)
	events, delivered, deliveries := keyedload.CheckDelivered(t, db, hooks, 60*time.Second)
	out := migrator.Run("ledger", "verify")
	t.Logf("%d keyed requests (%d acknowledged) while %d process(es) were replaced one by one: %d 5xx; "+
		"%d events recorded, %d delivered (%d deliveries); payd ledger verify: %s",
		total.Requests(), res.Acked, n, n503+other, events, delivered, deliveries, strings.TrimSpace(string(out)))
}

// ready is nil when GET base/readyz answers 200.
func ready(base string) error {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("/readyz answered %d %s", resp.StatusCode, b)
	}
	return nil
}
