package auth

import "testing"

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
