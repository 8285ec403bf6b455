package screening

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

var fullOnce struct {
	sync.Once
	list *List
	err  error
}

// sharedData returns the project's reference data directory. Without it
// (a fresh clone) the test is skipped, naming PAYD_SHARED_DATA; under
// CI=true it fails, since CI must run every check.
func sharedData(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("PAYD_SHARED_DATA")
	if dir == "" {
		dir = filepath.Join(testutil.RepoRoot(t), "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "sanctions")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sanctions reference data not found in %s (set PAYD_SHARED_DATA)", dir)
		}
		t.Skipf("sanctions reference data not found in %s: set PAYD_SHARED_DATA to run this test", dir)
	}
	return dir
}

// fullListPath returns the path of the 2021 SDN list in the shared data.
func fullListPath(t testing.TB) string {
	return filepath.Join(sharedData(t), "sanctions", "ofac_full_2021", "sdn.csv")
}

// fixturePath returns the path of the small fixture list in the shared data.
func fixturePath(t testing.TB) string {
	return filepath.Join(sharedData(t), "sanctions", "ofac_fixture_small", "sdn.csv")
}

// fullList loads the 2021 SDN list once per test binary.
func fullList(t testing.TB) *List {
	t.Helper()
	path := fullListPath(t)
	fullOnce.Do(func() { fullOnce.list, fullOnce.err = Load(context.Background(), path) })
	if fullOnce.err != nil {
		t.Fatal(fullOnce.err)
	}
	return fullOnce.list
}
