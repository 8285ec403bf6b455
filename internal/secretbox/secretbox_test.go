package secretbox

import (
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := New(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Seal([]byte(`{"api_key":"secret-value"}`), "mer_1/bank_a")
	if err != nil || strings.Contains(s, "secret-value") {
		t.Fatalf("seal: %q %v", s, err)
	}
	pt, err := b.Open(s, "mer_1/bank_a")
	if err != nil || string(pt) != `{"api_key":"secret-value"}` {
		t.Fatal(string(pt), err)
	}
	if _, err := b.Open(s, "mer_2/bank_a"); err != ErrOpen {
		t.Fatal("value opened under another row's binding")
	}
	empty, _ := New("")
	if _, err := empty.Seal([]byte("x"), ""); err != ErrNoKey {
		t.Fatal("sealed without a key")
	}
	if _, err := New("short"); err == nil {
		t.Fatal("bad key accepted")
	}
}
