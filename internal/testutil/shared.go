// Package testutil holds helpers shared by payd's tests.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the directory holding go.mod, found by walking up from the
// working directory of the test.
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// TestData returns the path of parts below the repository's testdata
// directory: the small reference data (DUKPT vectors, ISO 20022 schemas and
// samples, a small OFAC list) that tests need, kept in the repository so a
// fresh clone passes its tests. testdata/SOURCES.md names each file's source.
func TestData(tb testing.TB, parts ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{RepoRoot(tb), "testdata"}, parts...)...)
}

// LargeData returns the path of parts below the large reference data kept
// outside the repository (the full OFAC SDN list): PAYD_SHARED_DATA when set,
// else ../shared/data beside the repository root. When it is missing the test
// is skipped with how to enable it, except under CI=true, where it fails: CI
// must run every test.
func LargeData(tb testing.TB, parts ...string) string {
	tb.Helper()
	root := os.Getenv("PAYD_SHARED_DATA")
	if root == "" {
		root = filepath.Join(RepoRoot(tb), "..", "shared", "data")
	}
	p := filepath.Join(append([]string{root}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("large reference data %s not found (set PAYD_SHARED_DATA to the reference-data directory, see testdata/SOURCES.md)", p)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg + ": test skipped")
	}
	return p
}

// SharedData returns the root of the large reference data, as LargeData.
//
// Deprecated: use TestData for the small data kept in the repository and
// LargeData for the rest; kept so branches written against it still build.
func SharedData(tb testing.TB) string {
	tb.Helper()
	return LargeData(tb)
}

// Tool returns the path of the first of names found on PATH. When none is,
// the test is skipped with how to install it (debianPackage), except under
// CI=true, where a missing tool fails the test: CI must run every check.
func Tool(tb testing.TB, debianPackage string, names ...string) string {
	tb.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is required in CI (apt-get install -y %s)", names[0], debianPackage)
	}
	tb.Skipf("%s not installed (apt-get install -y %s): test skipped", names[0], debianPackage)
	return ""
}

// LogHasLine reports whether one line of logs holds every part (a level, a
// request id, an error's text): a test's check that something was logged
// together, not in separate lines.
func LogHasLine(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
