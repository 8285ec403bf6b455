// Package testutil holds helpers shared by payd's tests.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
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

// SharedData returns the path of the project's reference data, ../shared/data
// beside the repository root, or PAYD_SHARED_DATA when set. Tests read the
// reference data from there; it is never copied into the repository.
func SharedData(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("PAYD_SHARED_DATA"); p != "" {
		return p
	}
	p := filepath.Join(RepoRoot(tb), "..", "shared", "data")
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("reference data not found at %s (set PAYD_SHARED_DATA): %v", p, err)
	}
	return p
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
