package docsamples

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/payd/payd/internal/testutil"
)

// notRunnable lists the operations whose samples the runner does not yet
// bring to their documented status, each with the reason. The list only
// shrinks: a listed operation that answers its documented status fails the
// test, so it is taken off.
var notRunnable = map[string]string{}

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

// idLike is an example id: a prefix and a ULID.
var idLike = regexp.MustCompile(`^([a-z]+)_[0-9A-HJKMNP-TV-Z]{26}$`)

// verdict checks one sample's outcome against notRunnable: a sample that
// fails must be listed, a listed one must still fail.
func verdict(t *testing.T, lang string, p planned, ok bool, status int, detail []byte, err error) {
	t.Helper()
	reason, listed := notRunnable[p.OperationID]
	switch {
	case !ok && !listed:
		t.Errorf("%s sample of %s (%s %s): answered %d (want %s), err %v: %.400s", lang, p.OperationID, p.Method, p.Path, status, p.Status, err, detail)
	case ok && listed:
		t.Errorf("%s sample of %s now succeeds: take it off notRunnable (%s)", lang, p.OperationID, reason)
	case !ok:
		t.Logf("%s sample of %s, not runnable (%s): answered %d: %.300s", lang, p.OperationID, reason, status, detail)
	}
}

func loadSet(t *testing.T) *apidocs.SampleSet {
	set, err := apidocs.LoadSamples(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestCurlSamples runs every operation's curl sample, as the page shows it
// (with this server's address and the ids of objects made for it), against
// a real payd, and checks it answers one of the statuses the reference
// documents.
func TestCurlSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to run the reference's curl samples")
	}
	set := loadSet(t)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		all := plan(t, e, set)
		dir := t.TempDir()
		// One shell runs every sample in turn, each in a subshell with its
		// key; --max-time ends a stream (GET /v1/events/stream) after its
		// first seconds: its status is known by then.
		var script strings.Builder
		for i, p := range all {
			limit := 60
			if streams(p) {
				limit = 2
			}
			fmt.Fprintf(&script, "export PAYD_API_KEY='%s'\n(\n%s --max-time %d -o %s/body%d -w '%%{http_code}' >%s/status%d 2>%s/err%d\n)\necho $? >%s/rc%d\n",
				p.Key, p.Code["curl"], limit, dir, i, dir, i, dir, i, dir, i)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "sh", "-c", script.String()).CombinedOutput(); err != nil {
			t.Fatalf("sh: %v\n%s", err, out)
		}
		n := 0
		for i, p := range all {
			read := func(name string) string {
				b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s%d", name, i)))
				return strings.TrimSpace(string(b))
			}
			var err error
			if rc := read("rc"); rc != "0" && (rc != "28" || !streams(p)) { // 28: --max-time reached
				err = fmt.Errorf("curl exited %s: %s", rc, read("err"))
			}
			status, _ := strconv.Atoi(read("status"))
			ok := err == nil && slices.Contains(p.Statuses, strconv.Itoa(status))
			if ok {
				n++
			}
			verdict(t, "curl", p, ok, status, []byte(read("body")), err)
		}
		t.Logf("%d curl samples answered their documented status in %v", n, time.Since(start).Round(time.Millisecond))
	}, withSanctionsList(t))
}

// streams reports whether the operation answers an event stream (its SDK
// samples close the stream they open).
func streams(p planned) bool { return strings.Contains(p.Code["Python"], "stream.close()") }

// runnable leaves out the operations listed in notRunnable (the curl run
// shows they still fail; an SDK's retries would only make the run slower).
func runnable(all []planned) []planned {
	var out []planned
	for _, p := range all {
		if _, listed := notRunnable[p.OperationID]; !listed {
			out = append(out, p)
		}
	}
	return out
}

// TestGoSamples compiles every operation's Go sample, as the page shows it
// (with this server's address and the ids of objects made for it), each as
// a function of one program built against this checkout's package client
// (go build -overlay adds the program without writing into the tree), and
// runs each: a sample that exits 0 got a success status (the client returns
// an error on any other, and the sample ends with log.Fatal).
func TestGoSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	t.Parallel()
	set := loadSet(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		all := plan(t, e, set)
		var src strings.Builder
		src.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"log\"\n\t\"os\"\n\n\t\"github.com/payd/payd/client\"\n)\n\n" +
			"var _ = context.Background\nvar _ = json.Unmarshal\nvar _ = fmt.Printf\nvar _ = log.Fatal\nvar _ = os.Getenv\n\n")
		for i, p := range all {
			fmt.Fprintf(&src, "// %s\nfunc sample%d() {\n%s}\n\n", p.OperationID, i, p.Code["Go"])
		}
		src.WriteString("var samples = map[string]func(){\n")
		for i := range all {
			fmt.Fprintf(&src, "\t%q: sample%d,\n", strconv.Itoa(i), i)
		}
		src.WriteString("}\n\nfunc main() { samples[os.Args[1]]() }\n")
		dir := t.TempDir()
		file := filepath.Join(dir, "main.go")
		if err := os.WriteFile(file, []byte(src.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "test/docsamples/gosamples/main.go"): file}})
		if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "samples")
		start := time.Now()
		cmd := exec.Command("go", "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", bin, "./test/docsamples/gosamples")
		cmd.Dir, cmd.Env = root, testutil.GoBuildEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the Go samples do not compile: %v\n%s", err, out)
		}
		built := time.Since(start)
		n := 0
		for i, p := range all {
			if _, listed := notRunnable[p.OperationID]; listed {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := exec.CommandContext(ctx, bin, strconv.Itoa(i))
			cmd.Env = append(os.Environ(), "PAYD_API_KEY="+p.Key)
			out, err := cmd.CombinedOutput()
			cancel()
			if err == nil {
				n++
			}
			verdict(t, "Go", p, err == nil, 0, out, err)
		}
		t.Logf("%d Go samples compiled in %v; %d ran and succeeded in %v", len(all), built.Round(time.Millisecond), n,
			(time.Since(start) - built).Round(time.Millisecond))
	}, withSanctionsList(t))
}

// pyDriver runs the Python samples in one python3 process: each is
// executed in turn, in a namespace of its own, with its key in
// PAYD_API_KEY; a sample that raises did not get a success status (the SDK
// raises PaydError on any other). Each outcome is one line.
const pyDriver = `import json, os, sys, traceback
for s in json.load(open(sys.argv[1])):
    os.environ["PAYD_API_KEY"] = s["key"]
    try:
        exec(compile(s["code"], "sample%d.py" % s["index"], "exec"), {"__name__": "__main__"})
        outcome = {"index": s["index"], "ok": True}
    except BaseException:
        outcome = {"index": s["index"], "ok": False, "error": traceback.format_exc()[-400:]}
    sys.stdout.write("\nPAYD-SAMPLE " + json.dumps(outcome) + "\n")
    sys.stdout.flush()
`

// TestPythonSamples runs every operation's Python sample, as the page shows
// it (with this server's address and the ids of objects made for it), with
// the SDK of this checkout (sdk/python/src) against a real payd, in one
// python3 process.
func TestPythonSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to run the reference's Python samples")
	}
	src, err := filepath.Abs("../../sdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	set := loadSet(t)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		all := runnable(plan(t, e, set))
		dir := t.TempDir()
		writeSamples(t, dir, all, "Python", map[string]string{"driver.py": pyDriver})
		cmd := exec.Command(python, "driver.py", "samples.json")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
		runDriver(t, "Python", cmd, dir, all)
	}, withSanctionsList(t))
}

// writeSamples writes samples.json (each sample's index, code in lang and
// key) and the other files into dir.
func writeSamples(t *testing.T, dir string, all []planned, lang string, files map[string]string) {
	t.Helper()
	type sample struct {
		Index int    `json:"index"`
		Code  string `json:"code"`
		Key   string `json:"key"`
	}
	var samples []sample
	for i, p := range all {
		samples = append(samples, sample{Index: i, Code: p.Code[lang], Key: p.Key})
	}
	js, _ := json.Marshal(samples)
	files["samples.json"] = string(js)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// runDriver runs a driver that runs every sample of all in one process and
// prints one line "PAYD-SAMPLE {index, ok, error}" per sample, and checks
// each outcome.
func runDriver(t *testing.T, lang string, cmd *exec.Cmd, dir string, all []planned) {
	t.Helper()
	start := time.Now()
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", lang, err, stderr.Bytes())
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s samples still running after 5 minutes:\n%s", lang, stderr.Bytes())
	}
	seen := map[int]bool{}
	n := 0
	for _, line := range strings.Split(stdout.String(), "\n") {
		rest, found := strings.CutPrefix(line, "PAYD-SAMPLE ")
		if !found {
			continue
		}
		var o struct {
			Index int
			OK    bool
			Error string
		}
		if err := json.Unmarshal([]byte(rest), &o); err != nil || o.Index < 0 || o.Index >= len(all) {
			t.Fatalf("%s driver printed %q", lang, line)
		}
		seen[o.Index] = true
		if o.OK {
			n++
		}
		verdict(t, lang, all[o.Index], o.OK, 0, []byte(o.Error), nil)
	}
	if len(seen) != len(all) {
		t.Errorf("the %s driver reported %d of %d samples: %s", lang, len(seen), len(all), stderr.Bytes())
	}
	t.Logf("%d %s samples succeeded in %v", n, lang, time.Since(start).Round(time.Millisecond))
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
	t.Parallel()
	sdk, err := filepath.Abs("../../sdk/typescript")
	if err != nil {
		t.Fatal(err)
	}
	tsc := filepath.Join(sdk, "node_modules", ".bin", "tsc")
	needTypeScriptSDK(t, tsc)
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

// needTypeScriptSDK skips the test when the TypeScript SDK's development
// dependencies or build are missing, except under CI=true, where it fails.
func needTypeScriptSDK(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%v: run npm ci && npm run build in sdk/typescript first", err)
			}
			t.Skipf("the TypeScript SDK is not built (%v): run npm ci && npm run build in sdk/typescript", err)
		}
	}
}

// tsDriver runs the TypeScript samples in one node process: each is
// transpiled by the SDK's TypeScript compiler (its types are checked by
// TestTypeScriptSamplesTypeCheck) and imported in turn, with its key in
// PAYD_API_KEY; a sample whose import throws did not get a success status
// (the SDK throws PaydError on any other). Each outcome is one line.
const tsDriver = `import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
const require = createRequire(import.meta.url);
const ts = require(process.argv[2]);
const samples = JSON.parse(readFileSync("samples.json", "utf8"));
for (const s of samples) {
  const js = ts.transpileModule(s.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  writeFileSync("sample" + s.index + ".mjs", js);
  process.env.PAYD_API_KEY = s.key;
  let outcome;
  try {
    await import("./sample" + s.index + ".mjs");
    outcome = { index: s.index, ok: true };
  } catch (e) {
    outcome = { index: s.index, ok: false, error: String(e && e.stack || e).slice(0, 400) };
  }
  process.stdout.write("\nPAYD-SAMPLE " + JSON.stringify(outcome) + "\n");
}
process.exit(0);
`

// TestTypeScriptSamples runs every operation's TypeScript sample, as the
// page shows it (with this server's address and the ids of objects made for
// it), with the repository's built SDK (sdk/typescript/dist, as npm ci &&
// npm run build leave it, which CI runs before the Go tests) in one node
// process. Without node or the built SDK it skips, except under CI=true,
// where it fails.
func TestTypeScriptSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is needed to run the reference's TypeScript samples")
		}
		t.Skip("the TypeScript SDK is not built (node not installed): install node, then run npm ci && npm run build in sdk/typescript")
	}
	sdk, err := filepath.Abs("../../sdk/typescript")
	if err != nil {
		t.Fatal(err)
	}
	typescript := filepath.Join(sdk, "node_modules", "typescript", "lib", "typescript.js")
	needTypeScriptSDK(t, typescript, filepath.Join(sdk, "dist", "src", "index.js"))
	set := loadSet(t)
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		all := runnable(plan(t, e, set))
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@payd"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(sdk, filepath.Join(dir, "node_modules", "@payd", "payd")); err != nil {
			t.Fatal(err)
		}
		writeSamples(t, dir, all, "TypeScript", map[string]string{"driver.mjs": tsDriver, "package.json": `{"type":"module"}`})
		runDriver(t, "TypeScript", exec.Command(node, "driver.mjs", typescript), dir, all)
	}, withSanctionsList(t))
}
