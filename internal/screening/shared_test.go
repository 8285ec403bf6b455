package screening

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

var fullOnce struct {
	sync.Once
	list *List
	err  error
}

// fullListPath returns the path of the 2021 SDN list in the shared data.
func fullListPath(t testing.TB) string {
	return testutil.LargeData(t, "sanctions", "ofac_full_2021", "sdn.csv")
}

// fixturePath returns the path of the small fixture list in the shared data.
func fixturePath(t testing.TB) string {
	return testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
}

// fullList loads the 2021 SDN list once per test binary; with
// PAYD_SCREENING_EXTRA_LISTS (comma-separated paths, e.g. the UN and EU
// lists) those lists are loaded beside it, as PAYD_SANCTIONS_LIST would.
func fullList(t testing.TB) *List {
	t.Helper()
	path := fullListPath(t)
	if extra := os.Getenv("PAYD_SCREENING_EXTRA_LISTS"); extra != "" {
		path += "," + extra
	}
	fullOnce.Do(func() { fullOnce.list, fullOnce.err = Load(context.Background(), path) })
	if fullOnce.err != nil {
		t.Fatal(fullOnce.err)
	}
	return fullOnce.list
}
