// Command testsummary reads `go test -json` on its standard input and prints
// what plain `go test` prints (a line per package, the output of failing
// tests), then a summary: every skipped test grouped by its reason, the
// slowest packages, and the failures. It exits 1 when any package or test
// failed or did not build; with pipefail, the pipeline keeps go test's own
// verdict too:
//
//	go test -race -json ./... | go run ./tools/testsummary
//
// Skips are grouped by the first line of their message with file positions
// removed, so "PostgreSQL tests skipped: set PAYD_TEST_DATABASE_URL=..."
// printed by a hundred tests is one line with a count.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail name the package being built here
	Test       string
	Elapsed    float64
	Output     string
}

// pkgResult is one package's verdict and wall time.
type pkgResult struct {
	name    string
	action  string
	elapsed float64
}

type summary struct {
	out      io.Writer
	output   map[string][]string // package+test -> its output lines, until it ends
	skips    map[string][]string // reason -> tests
	failed   []string
	packages []pkgResult
	bad      int // lines that were not test2json events
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[string][]string{}, skips: map[string][]string{}}
}

// position matches the "file_test.go:123: " prefix go test puts before a
// t.Skip or t.Log message.
var position = regexp.MustCompile(`^\s*[\w./-]+\.go:\d+:\s*`)

func (s *summary) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		s.output[key] = append(s.output[key], e.Output)
		return
	case "build-output":
		s.output["build\x00"+e.ImportPath] = append(s.output["build\x00"+e.ImportPath], e.Output)
		return
	case "build-fail":
		for _, l := range s.output["build\x00"+e.ImportPath] {
			fmt.Fprint(s.out, l)
		}
		s.failed = append(s.failed, e.ImportPath+" (build)")
		return
	case "run", "pause", "cont", "start", "bench":
		return
	}
	lines := s.output[key]
	delete(s.output, key)
	if e.Test == "" { // the package's end
		s.packages = append(s.packages, pkgResult{e.Package, e.Action, e.Elapsed})
		switch e.Action {
		case "pass":
			fmt.Fprintf(s.out, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
		case "skip":
			fmt.Fprintf(s.out, "?   \t%s\t[no test files]\n", e.Package)
		case "fail":
			for _, l := range lines {
				fmt.Fprint(s.out, l)
			}
			fmt.Fprintf(s.out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
			s.failed = append(s.failed, e.Package)
		}
		return
	}
	switch e.Action {
	case "fail":
		for _, l := range lines {
			fmt.Fprint(s.out, l)
		}
		s.failed = append(s.failed, e.Package+" "+e.Test)
	case "skip":
		reason := skipReason(lines)
		s.skips[reason] = append(s.skips[reason], e.Package+" "+e.Test)
	}
}

// skipReason is the first line of a skipped test's own message, without the
// file position, or "(no message)".
func skipReason(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		return strings.TrimSpace(position.ReplaceAllString(t, ""))
	}
	return "(no message)"
}

// report prints the summary and says whether everything passed.
func (s *summary) report() bool {
	w := s.out
	if len(s.skips) > 0 {
		reasons := make([]string, 0, len(s.skips))
		total := 0
		for r, tests := range s.skips {
			reasons = append(reasons, r)
			total += len(tests)
		}
		sort.Slice(reasons, func(i, j int) bool {
			if a, b := len(s.skips[reasons[i]]), len(s.skips[reasons[j]]); a != b {
				return a > b
			}
			return reasons[i] < reasons[j]
		})
		fmt.Fprintf(w, "\n%d tests skipped, for %d reasons:\n", total, len(reasons))
		for _, r := range reasons {
			tests := s.skips[r]
			sort.Strings(tests)
			fmt.Fprintf(w, "  %4d  %s\n", len(tests), r)
			for i, t := range tests {
				if i == 3 {
					fmt.Fprintf(w, "          ... and %d more\n", len(tests)-3)
					break
				}
				fmt.Fprintf(w, "          %s\n", t)
			}
		}
	} else {
		fmt.Fprintln(w, "\nno test skipped")
	}
	pk := append([]pkgResult(nil), s.packages...)
	sort.Slice(pk, func(i, j int) bool { return pk[i].elapsed > pk[j].elapsed })
	var sum float64
	for _, p := range pk {
		sum += p.elapsed
	}
	fmt.Fprintf(w, "\nslowest packages (of %d; %s of package time in all):\n", len(pk), round(sum))
	for i, p := range pk {
		if i == 10 || p.elapsed == 0 {
			break
		}
		fmt.Fprintf(w, "  %8s  %s\n", round(p.elapsed), p.name)
	}
	if s.bad > 0 {
		fmt.Fprintf(w, "\n%d input lines were not go test -json events\n", s.bad)
	}
	if len(s.failed) > 0 {
		fmt.Fprintf(w, "\nFAILED (%d):\n", len(s.failed))
		for _, f := range s.failed {
			fmt.Fprintf(w, "  %s\n", f)
		}
		return false
	}
	fmt.Fprintln(w, "\nall passed")
	return true
}

func round(sec float64) string {
	return (time.Duration(sec*10) * time.Second / 10).String()
}

func run(in io.Reader, out io.Writer) bool {
	s := newSummary(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// go test prints build errors and some panics as plain text.
			fmt.Fprintln(out, string(line))
			s.bad++
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsummary:", err)
		return false
	}
	// Lines that are not events (a build error printed as text by an older
	// go command) are printed as they came; go test's own exit status,
	// kept by the pipeline's pipefail, fails the run for them.
	return s.report()
}

func main() {
	if !run(os.Stdin, os.Stdout) {
		os.Exit(1)
	}
}
