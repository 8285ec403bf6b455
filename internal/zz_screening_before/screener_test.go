package screening

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// listDir copies the fixture list into a temporary directory the test may
// change, and returns the path of its sdn.csv.
func listDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Dir(fixturePath(t))
	for _, f := range []string{sdnFile, altFile} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(data))
	}
	return filepath.Join(dir, sdnFile)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const oneEntry = `36,"AEROCARIBBEAN AIRLINES",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\r\n"

func TestScreenerWithoutList(t *testing.T) {
	var nilScreener *Screener
	for _, s := range []*Screener{nilScreener, NewScreener("", Options{}), NewScreener("/not/loaded/sdn.csv", Options{})} {
		if r := s.Screen("Dmitry Khoroshev"); r.Status != StatusNotScreened {
			t.Errorf("Screen = %+v, want not_screened", r)
		}
		if s.Size() != 0 || s.List() != nil {
			t.Errorf("Size = %d, List = %v; want 0, nil", s.Size(), s.List())
		}
	}
	if err := nilScreener.Reload(context.Background()); !errors.Is(err, ErrNoSource) {
		t.Errorf("nil Reload = %v, want ErrNoSource", err)
	}
	if err := NewScreener("", Options{}).Reload(context.Background()); !errors.Is(err, ErrNoSource) {
		t.Errorf("Reload without source = %v, want ErrNoSource", err)
	}
}

func TestScreenerReload(t *testing.T) {
	ctx := context.Background()
	path := listDir(t)
	s, err := OpenScreener(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Source() != path || s.Size() != 17 {
		t.Fatalf("Source %q Size %d, want %q 17", s.Source(), s.Size(), path)
	}
	if r := s.Screen("Dmitry Khoroshev"); r.Status != StatusHit {
		t.Fatalf("before reload: %+v, want a hit", r)
	}

	// A new list replaces the old one at once.
	writeFile(t, path, oneEntry)
	if err := os.Remove(filepath.Join(filepath.Dir(path), altFile)); err != nil {
		t.Fatal(err)
	}
	before := s.List()
	if err := s.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if s.List() == before || s.Size() != 1 || s.List().AliasCount() != 0 {
		t.Fatalf("after reload: Size %d aliases %d, want a new list of 1 entry without aliases", s.Size(), s.List().AliasCount())
	}
	if r := s.Screen("Dmitry Khoroshev"); r.Status != StatusClear {
		t.Errorf("after reload: %+v, want clear", r)
	}
	if r := s.Screen("Aerocaribbean Airlines"); r.Status != StatusHit {
		t.Errorf("after reload: %+v, want a hit", r)
	}

	// A broken or missing list is refused and the current one stays.
	current := s.List()
	for name, change := range map[string]func(){
		"malformed": func() { writeFile(t, path, oneEntry+`37,"HALF A RECORD"`+"\r\n") },
		"empty":     func() { writeFile(t, path, "") },
		"missing":   func() { os.Remove(path) },
	} {
		change()
		err := s.Reload(ctx)
		var le *LoadError
		if !errors.As(err, &le) || le.Source != path {
			t.Errorf("%s: Reload = %v, want a *LoadError for %s", name, err, path)
		}
		if s.List() != current {
			t.Errorf("%s: the list changed after a failed reload", name)
		}
		if r := s.Screen("Aerocaribbean Airlines"); r.Status != StatusHit {
			t.Errorf("%s: after a failed reload: %+v, want the old list's hit", name, r)
		}
	}
}

func TestScreenerConcurrentReload(t *testing.T) {
	ctx := context.Background()
	path := listDir(t)
	s, err := OpenScreener(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"Dmitry Khoroshev", "Iris Makran", "Jean Dupont", "", "Artem Lifshits"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := s.Screen(names[i%len(names)])
				if names[i%len(names)] == "Jean Dupont" && r.Status != StatusClear {
					t.Errorf("Jean Dupont: %+v", r)
					return
				}
			}
		}()
	}
	for range 10 {
		if err := s.Reload(ctx); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
}

func TestScreenConcurrentFullList(t *testing.T) {
	l := fullList(t)
	names := append(append([]string{}, benchNames["hit"]...), benchNames["clear"]...)
	want := make([]Result, len(names))
	for i, n := range names {
		want[i] = l.Screen(n, Options{})
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 20 {
				i := (g + round) % len(names)
				got := l.Screen(names[i], Options{})
				if got.Status != want[i].Status || len(got.Matches) != len(want[i].Matches) ||
					(len(got.Matches) > 0 && got.Matches[0].EntryID != want[i].Matches[0].EntryID) {
					t.Errorf("concurrent Screen(%q) = %+v, want %+v", names[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
