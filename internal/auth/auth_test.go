package auth

import (
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := VerifyPassword(h, "correct horse"); !ok {
		t.Fatal("right password refused")
	}
	if ok, _ := VerifyPassword(h, "wrong"); ok {
		t.Fatal("wrong password accepted")
	}
	if _, err := VerifyPassword("$bcrypt$x", "a"); err == nil {
		t.Fatal("malformed hash accepted")
	}
	// Full cost unless a test asked for less (this package's tests do not).
	if !strings.Contains(h, "$m=65536,t=2,p=2$") {
		t.Fatalf("hash %s: want argon2id at 64 MiB, 2 passes, 2 lanes", h)
	}
}

// TestLowHashCostForTests: the low cost a test binary may ask for still
// makes hashes that verify, and names its own parameters; hashes made at
// full cost verify after the switch as before it.
func TestLowHashCostForTests(t *testing.T) {
	full, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	UseLowHashCostForTests()
	defer lowCost.Store(false)
	low, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(low, "$m=64,t=1,p=1$") {
		t.Fatalf("low-cost hash %s", low)
	}
	for _, h := range []string{full, low} {
		if ok, _ := VerifyPassword(h, "correct horse"); !ok {
			t.Fatalf("%s: right password refused", h)
		}
		if ok, _ := VerifyPassword(h, "wrong"); ok {
			t.Fatalf("%s: wrong password accepted", h)
		}
	}
}

func TestKeyPrefixes(t *testing.T) {
	for _, c := range []struct {
		key  string
		kind string
		live bool
		ok   bool
	}{{"sk_test_x", KindSecret, false, true}, {"sk_live_x", KindSecret, true, true}, {"pk_test_x", KindPublishable, false, true},
		{"pk_live_x", KindPublishable, true, true}, {"rk_test_x", "", false, false}} {
		k, l, ok := ParseKeyPrefix(c.key)
		if k != c.kind || l != c.live || ok != c.ok {
			t.Errorf("%s: %s %v %v", c.key, k, l, ok)
		}
	}
	if KeyPrefix(KindPublishable, true) != "pk_live_" {
		t.Fatal("prefix")
	}
}
