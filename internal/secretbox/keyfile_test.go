package secretbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestKeyFileCreatedOnceWithMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payd.db.key")
	keys := make([]string, 8)
	created := make([]bool, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			keys[i], created[i], err = KeyFile(path)
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	for i := range keys {
		if keys[i] != keys[0] {
			t.Fatalf("racing creators disagree: %q vs %q", keys[i], keys[0])
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d processes report creating the key, want 1", n)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := New(keys[0]); err != nil {
		t.Fatalf("created key unusable: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestCheckValue(t *testing.T) {
	a, err := CheckValue(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CheckValue(strings.Repeat("cd", 32))
	if a == b || len(a) != 16 || strings.Contains(a, "abab") {
		t.Fatalf("check values %q and %q", a, b)
	}
	if _, err := CheckValue("short"); err == nil {
		t.Fatal("bad key accepted")
	}
	path := filepath.Join(t.TempDir(), "bad.key")
	os.WriteFile(path, []byte("not hex"), 0o600)
	if _, _, err := KeyFile(path); err == nil {
		t.Fatal("a malformed key file was accepted")
	}
}
