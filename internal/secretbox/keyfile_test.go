package secretbox

import (
	"bytes"
	"encoding/hex"
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

// TestKeyFileOpenToOthersRefused: a secrets key file whose mode gives
// anything to the group or to others is refused, naming the file; 0600
// and 0400 are read.
func TestKeyFileOpenToOthersRefused(t *testing.T) {
	key := strings.Repeat("3e", 32)
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o602, 0o666, 0o610} {
		p := filepath.Join(t.TempDir(), "payd.key")
		os.WriteFile(p, []byte(key+"\n"), 0o600)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		_, err := ReadKeyFile(p)
		if err == nil || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), key) {
			t.Errorf("mode %04o: %v", mode, err)
		}
		if _, _, err := KeyFile(p); err == nil {
			t.Errorf("mode %04o: the SQLite key file was read", mode)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		p := filepath.Join(t.TempDir(), "payd.key")
		os.WriteFile(p, []byte(key+"\n"), 0o600)
		os.Chmod(p, mode)
		if got, err := ReadKeyFile(p); err != nil || got != key {
			t.Errorf("mode %04o: %q %v", mode, got, err)
		}
	}
}

// TestDeriveKey: a derived key is 32 bytes, differs per purpose, is neither
// the sealing key nor an HMAC under its text, and an empty secrets key
// derives nothing.
func TestDeriveKey(t *testing.T) {
	key := strings.Repeat("3e", 32)
	a, err := DeriveKey(key, "hosted invoice link")
	if err != nil || len(a) != 32 {
		t.Fatalf("derive: %x %v", a, err)
	}
	b, _ := DeriveKey(key, "another purpose")
	raw, _ := hex.DecodeString(key)
	if bytes.Equal(a, b) || bytes.Equal(a, raw) || bytes.Equal(a, []byte(key)) {
		t.Errorf("derived keys: %x %x", a, b)
	}
	if again, _ := DeriveKey(" "+key+"\n", "hosted invoice link"); !bytes.Equal(again, a) {
		t.Errorf("derivation depends on surrounding space")
	}
	if none, err := DeriveKey("", "hosted invoice link"); none != nil || err != nil {
		t.Errorf("empty key derived %x, %v", none, err)
	}
	if _, err := DeriveKey("zz", "x"); err == nil {
		t.Errorf("a bad key derived")
	}
}
