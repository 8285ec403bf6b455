package screening

import (
	"context"
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

// fullListPath returns the path of the 2021 SDN list in the shared data.
func fullListPath(t testing.TB) string {
	return filepath.Join(testutil.SharedData(t), "sanctions", "ofac_full_2021", "sdn.csv")
}

// fixturePath returns the path of the small fixture list in the shared data.
func fixturePath(t testing.TB) string {
	return filepath.Join(testutil.SharedData(t), "sanctions", "ofac_fixture_small", "sdn.csv")
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
