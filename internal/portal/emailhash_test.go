package portal

import "testing"

// TestEmailHashNormalises: the login throttle counts every form of one
// address (case, full-width) against the same per-email bucket.
func TestEmailHashNormalises(t *testing.T) {
	a := emailHash("ana@example.com")
	for _, v := range []string{"Ana@Example.COM", " ana@example.com ", "ＡＮＡ＠ｅｘａｍｐｌｅ．ｃｏｍ", "ａｎａ@example.com"} {
		if emailHash(v) != a {
			t.Errorf("emailHash(%q) differs from ana@example.com's", v)
		}
	}
	if emailHash("bob@example.com") == a {
		t.Error("different addresses share a hash")
	}
}
