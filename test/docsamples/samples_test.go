package docsamples

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/api"
	"github.com/payd/payd/internal/apidocs"
	"github.com/payd/payd/internal/app/apptest"
)

// notRunnable lists the operations whose samples the runner does not yet
// bring to their documented status, each with the reason. The list only
// shrinks: a listed operation that answers its documented status fails the
// test, so it is taken off.
var notRunnable = map[string]string{
	"createSandboxOverride":       "the example's scenario is not offered for the example's provider",
	"createRefund":                "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"createSandboxDispute":        "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"createTransfer":              "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"listTransfers":               "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"getSettlementReport":         "the document gives no example for the required date parameter",
	"getSettingsChange":           "needs a pending settings change (dual approval), which no sample makes",
	"getPayoutBatch":              "the bulk create answers a po_bulk_ id the example's batch_ id does not name",
	"getRefund":                   "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"getDispute":                  "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"getTransfer":                 "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"getSettlementReconciliation": "the document gives no example for the required date parameter",
	"approveSettingsChange":       "needs a pending settings change (dual approval), which no sample makes",
	"confirmPaymentIntent":        "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"cancelPaymentIntent":         "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"capturePaymentIntent":        "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"approvePayout":               "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"reviewPayout":                "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"retryPayout":                 "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"approvePayoutBatch":          "the bulk create answers a po_bulk_ id the example's batch_ id does not name",
	"cancelPayoutBatch":           "the bulk create answers a po_bulk_ id the example's batch_ id does not name",
	"approveRefund":               "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"cancelRefund":                "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"updateDispute":               "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"closeDispute":                "needs a succeeded payment intent the runner does not yet pick out (and what refunds and disputes make)",
	"returnTransfer":              "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"cancelTransfer":              "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"reviewTransfer":              "bank transfer endpoints answer only a participant bank (a merchant created with a BIC); the runner's merchant is not one",
	"createTerminalPayment":       "needs a payload encrypted under the terminal's key, which the example cannot carry",
	"receiveProviderCallback":     "needs a Provider-Signature made with the merchant's provider secret",
	"finalizeInvoice":             "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"voidInvoice":                 "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"markInvoiceUncollectible":    "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
	"payInvoice":                  "needs an object in a state the create sample does not leave it in (the runner's order makes it succeeded or paid)",
}

// runner executes samples in an order that makes the objects they name
// exist, taking the ids they need from earlier answers.
type runner struct {
	t   *testing.T
	set *apidocs.SampleSet
	env *apptest.Env
	ids map[string]string // id prefix ("pi", "re") -> an id seen in an answer
	seq int
	// onlyRunnable leaves out the operations listed in notRunnable (the
	// curl run already shows they still fail; an SDK's retries would only
	// make the run slower).
	onlyRunnable bool
	exec         func(s apidocs.Samples) (status int, body []byte, err error)
}

// order puts creates first, then reads, then other changes, then deletes.
func order(all []apidocs.Samples) []apidocs.Samples {
	rank := func(s apidocs.Samples) int {
		switch {
		case len(s.PathParams) == 0 && s.Method == "POST":
			return 0
		case len(s.PathParams) == 0:
			return 1
		case s.Method == "GET":
			return 2
		case s.Method == "DELETE":
			return 4
		}
		return 3
	}
	out := append([]apidocs.Samples(nil), all...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

var idLike = regexp.MustCompile(`^([a-z]+)_[A-Za-z0-9]+$`)

// collect records every "id" in an answer by its prefix.
func (r *runner) collect(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "id" || strings.HasSuffix(k, "_id")) {
				if m := idLike.FindStringSubmatch(s); m != nil {
					if _, seen := r.ids[m[1]]; !seen || k == "id" {
						r.ids[m[1]] = s
					}
				}
			}
			r.collect(e)
		}
	case []any:
		for _, e := range x {
			r.collect(e)
		}
	}
}

// values writes a sample for this server, with ids from earlier answers.
func (r *runner) values(s apidocs.Samples, examples map[string]string) apidocs.SampleValues {
	r.seq++
	v := apidocs.SampleValues{BaseURL: r.env.URL, PathParams: map[string]string{},
		IdempotencyKey: fmt.Sprintf("docs-%s-%d", s.OperationID, r.seq)}
	v.Substitute = func(example string) string {
		if m := idLike.FindStringSubmatch(example); m != nil {
			if id, ok := r.ids[m[1]]; ok {
				return id
			}
		}
		return example
	}
	return v
}

// run executes every operation's sample and reports those that do not
// answer their documented status.
func (r *runner) run() (passed []string) {
	t := r.t
	examples := map[string]map[string]string{}
	for _, s := range r.set.Operations(apidocs.SampleValues{PathParams: nil}) {
		ex := map[string]string{}
		for _, p := range s.PathParams {
			// The page's sample names the parameter's example: recover it.
			ex[p] = exampleOf(s, p)
		}
		examples[s.OperationID] = ex
	}
	for _, base := range order(r.set.Operations(apidocs.SampleValues{})) {
		if _, listed := notRunnable[base.OperationID]; listed && r.onlyRunnable {
			continue
		}
		s, _ := r.set.Operation(base.OperationID, r.values(base, examples[base.OperationID]))
		began := time.Now()
		status, body, err := r.exec(s)
		if d := time.Since(began); d > 3*time.Second {
			t.Logf("%s took %v", s.OperationID, d.Round(time.Millisecond))
		}
		want, _ := strconv.Atoi(s.Status)
		ok := err == nil && slices.Contains(s.Statuses, strconv.Itoa(status))
		if ok {
			var v any
			if json.Unmarshal(body, &v) == nil {
				r.collect(v)
			}
			passed = append(passed, s.OperationID)
		}
		reason, listed := notRunnable[s.OperationID]
		switch {
		case !ok && !listed:
			t.Errorf("%s %s: answered %d (want %d), err %v: %.300s", s.Method, s.Path, status, want, err, body)
		case ok && listed:
			t.Errorf("%s now answers %d: take it off notRunnable (%s)", s.OperationID, want, reason)
		}
	}
	return passed
}

// exampleOf is the value the page's sample uses for a path parameter.
func exampleOf(s apidocs.Samples, param string) string {
	// The curl sample's URL is the base URL then the path with examples.
	curl := s.Code["curl"]
	url := curl[strings.Index(curl, "'")+1:]
	url = url[:strings.Index(url, "'")]
	url = url[strings.Index(url, "://")+3:]
	url = url[strings.Index(url, "/"):]
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url = url[:i]
	}
	tsegs, usegs := strings.Split(s.Path, "/"), strings.Split(url, "/")
	for i, seg := range tsegs {
		if seg == "{"+param+"}" && i < len(usegs) {
			return usegs[i]
		}
	}
	return ""
}

func loadSet(t *testing.T) *apidocs.SampleSet {
	set, err := apidocs.LoadSamples(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestCurlSamples runs every operation's curl sample, as the page shows it
// (with this server's address and the ids earlier answers made), against a
// real payd with the merchant's test key, and checks it answers the status
// the reference documents first.
func TestCurlSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed to run the reference's curl samples")
	}
	_ = curl
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		dir := t.TempDir()
		r := &runner{t: t, set: loadSet(t), env: e, ids: map[string]string{}}
		r.exec = func(s apidocs.Samples) (int, []byte, error) {
			out := filepath.Join(dir, "body")
			os.Remove(out)
			// --max-time ends a stream (GET /v1/events/stream) after its first
			// second: its status is known by then.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", s.Code["curl"]+" --max-time 2 -o "+out+" -w '%{http_code}'")
			cmd.Env = append(os.Environ(), "PAYD_API_KEY="+e.SK)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 28 { // 28: --max-time reached
					return 0, stderr.Bytes(), err
				}
			}
			body, _ := os.ReadFile(out)
			status, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
			return status, body, err
		}
		start := time.Now()
		passed := r.run()
		t.Logf("%d curl samples answered their documented status in %v", len(passed), time.Since(start).Round(time.Millisecond))
	})
}

// TestGoSamplesCompile compiles every operation's Go sample, as the page
// shows it, each as the body of a function of one program built against
// this checkout's package client (go build -overlay adds the program
// without writing into the tree).
func TestGoSamplesCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	set := loadSet(t)
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"log\"\n\t\"os\"\n\n\t\"github.com/payd/payd/client\"\n)\n\n" +
		"var _ = context.Background\nvar _ = json.Unmarshal\nvar _ = fmt.Printf\nvar _ = log.Fatal\nvar _ = os.Getenv\n\n")
	all := set.Operations(apidocs.SampleValues{})
	for i, s := range all {
		fmt.Fprintf(&src, "// %s\nfunc sample%d() {\n%s}\n\n", s.OperationID, i, s.Code["Go"])
	}
	src.WriteString("func main() {}\n")
	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "test/docsamples/gosamples/main.go"): file}})
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", filepath.Join(dir, "samples"), "./test/docsamples/gosamples")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Go samples do not compile: %v\n%s", err, out)
	}
	t.Logf("%d Go samples compiled", len(all))
}

// TestPythonSamples runs every operation's Python sample, as the page shows
// it (with this server's address and the ids earlier answers made), with
// the SDK of this checkout (sdk/python/src) against a real payd. A sample
// that ends without an exception got a success status (the SDK raises
// PaydError on any other); one line printing the answer as JSON is added so
// that later samples can use the ids it holds.
func TestPythonSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the reference's Python samples")
	}
	src, err := filepath.Abs("../../sdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := &runner{t: t, set: loadSet(t), env: e, ids: map[string]string{}, onlyRunnable: true}
		r.exec = func(s apidocs.Samples) (int, []byte, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code := s.Code["Python"] + "\nimport json as _json\nif 'res' in globals():\n    print('\\n' + _json.dumps(res))\n"
			cmd := exec.CommandContext(ctx, python, "-c", code)
			cmd.Env = append(os.Environ(), "PAYD_API_KEY="+e.SK, "PYTHONPATH="+src)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				msg := stderr.Bytes()
				if i := bytes.LastIndex(msg, []byte("\n")); len(msg) > 400 && i > 0 {
					msg = msg[max(0, len(msg)-400):]
				}
				return 0, msg, err
			}
			out := bytes.TrimSpace(stdout.Bytes())
			if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
				out = out[i+1:]
			}
			status, _ := strconv.Atoi(s.Status)
			return status, out, nil
		}
		start := time.Now()
		passed := r.run()
		t.Logf("%d Python samples succeeded in %v", len(passed), time.Since(start).Round(time.Millisecond))
	})
}

// TestTypeScriptSamplesTypeCheck type-checks every operation's TypeScript
// sample, as the page shows it, each as a module of its own, against the
// SDK's sources (sdk/typescript/src) with the SDK's own compiler settings
// (strict). It needs the SDK's development dependencies (npm ci in
// sdk/typescript, which CI runs before the Go tests); without them it says
// so and checks nothing, except under CI=true, where it fails.
func TestTypeScriptSamplesTypeCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	sdk, err := filepath.Abs("../../sdk/typescript")
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(sdk, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the TypeScript compiler is missing (%v): run npm ci in sdk/typescript first", err)
		}
		t.Log("the TypeScript samples are not type-checked: run npm ci in sdk/typescript to check them")
		return
	}
	dir := t.TempDir()
	set := loadSet(t)
	all := set.Operations(apidocs.SampleValues{})
	for i, s := range all {
		src := "// " + s.OperationID + "\n" + s.Code["TypeScript"] + "export {};\n"
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("sample%d.ts", i)), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tsconfig, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "lib": []string{"ES2022", "DOM"},
			"strict": true, "noEmit": true, "skipLibCheck": true, "types": []string{"node"},
			"typeRoots": []string{filepath.Join(sdk, "node_modules", "@types")},
			"baseUrl":   ".", "paths": map[string][]string{"@payd/payd": {filepath.Join(sdk, "src", "index.ts")}},
		},
		"include": []string{"*.ts"},
	})
	for name, data := range map[string][]byte{"tsconfig.json": tsconfig, "package.json": []byte(`{"type":"module"}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tsc, "-p", filepath.Join(dir, "tsconfig.json"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the TypeScript samples do not type-check: %v\n%s", err, out)
	}
	t.Logf("%d TypeScript samples type-checked", len(all))
}
