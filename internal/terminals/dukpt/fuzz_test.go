package dukpt

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseKSN checks that ParseKSN never panics, fails only with its typed
// errors, and that an accepted KSN prints back to the same hex.
func FuzzParseKSN(f *testing.F) {
	for _, s := range []string{"FFFF9876543210E00001", "FFFF9876543210EFFC00", "123456789012345600000001",
		"1234567890123456FFFF0000", "12345678901234560001FFFF", "ffff9876543210e0000g", ""} {
		f.Add(uint8(TDES), s)
		f.Add(uint8(AES128), s)
	}
	f.Fuzz(func(t *testing.T, alg uint8, s string) {
		k, err := ParseKSN(Algorithm(alg), s)
		if err != nil {
			if !errors.Is(err, ErrInvalidKSN) && !errors.Is(err, ErrUnsupportedAlgorithm) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if k.String() != strings.ToUpper(s) {
			t.Fatalf("String() = %s, input %s", k, s)
		}
		if k.Initial().Counter() != 0 || k.Initial().InitialKeyID() != k.InitialKeyID() {
			t.Fatalf("Initial() of %s", k)
		}
	})
}
