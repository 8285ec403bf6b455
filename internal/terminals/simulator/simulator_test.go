package simulator

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/dukpt"
)

// TestDeviceEncryptsForTheHost checks that what the simulated device encrypts
// the host decrypts with the sandbox BDK and the KSN alone, for both models.
func TestDeviceEncryptsForTheHost(t *testing.T) {
	for _, model := range terminals.Models {
		t.Run(string(model), func(t *testing.T) {
			alg, _ := model.Algorithm()
			a, err := InitialKSN(model, "term_a")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := InitialKSN(model, "term_b")
			if !a.IsInitial() || a.InitialKeyID() == b.InitialKeyID() {
				t.Fatalf("initial KSNs %s and %s", a, b)
			}
			dev, err := NewDevice(model, "term_a", 1)
			if err != nil {
				t.Fatal(err)
			}
			read, err := ChipRead(Payment{PAN: "4242424242424242", AmountMinor: 500})
			if err != nil {
				t.Fatal(err)
			}
			bdk, _ := terminals.SandboxBDK(model)
			for i := uint32(1); i <= 3; i++ {
				ksnHex, payload, err := dev.Encrypt(read)
				if err != nil {
					t.Fatal(err)
				}
				ksn, err := dukpt.ParseKSN(alg, ksnHex)
				if err != nil || ksn.Counter() != i || ksn.InitialKeyID() != a.InitialKeyID() {
					t.Fatalf("transaction %d: KSN %s (%v)", i, ksnHex, err)
				}
				ct := mustHex(t, payload)
				plain, err := dukpt.DecryptData(bdk, ksn, ct)
				if err != nil {
					t.Fatal(err)
				}
				r, err := card.FromTLV(plain)
				if err != nil || r.PAN() != "4242424242424242" || r.Brand() != card.BrandVisa {
					t.Fatalf("decrypted read: %v %v", r, err)
				}
				if amt, ok := r.AmountMinor(); !ok || amt != 500 || r.CurrencyNumeric() != "262" {
					t.Fatalf("amount %d %v currency %s", amt, ok, r.CurrencyNumeric())
				}
			}
		})
	}
}

// TestDeviceSkipsCountersItNeverUses starts a TDES device at a counter with
// eleven one-bits, which a device skips: it moves to the next one it uses.
func TestDeviceSkipsCountersItNeverUses(t *testing.T) {
	dev, err := NewDevice(terminals.Countertop, "term_a", 0x7FF) // 11 one-bits
	if err != nil {
		t.Fatal(err)
	}
	if got := dev.NextCounter(); got != 0x800 {
		t.Fatalf("next counter %#x, want 0x800", got)
	}
	if _, err := NewDevice(terminals.Countertop, "term_a", 0x1FFFFF); err == nil {
		t.Fatal("a counter past the last TDES counter was accepted")
	}
}

func TestStateAdvancesAndLocks(t *testing.T) {
	s := State{Dir: filepath.Join(t.TempDir(), "state")}
	if n, err := s.Next("term_x"); err != nil || n != 1 {
		t.Fatalf("fresh terminal: %d %v", n, err)
	}
	unlock, err := s.Lock("term_x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save("term_x", 42); err != nil {
		t.Fatal(err)
	}
	unlock()
	if n, err := s.Next("term_x"); err != nil || n != 42 {
		t.Fatalf("after save: %d %v", n, err)
	}
	if _, err := s.Next("../etc/passwd"); err == nil {
		t.Fatal("a path was accepted as a terminal id")
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "term_y.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next("term_y"); err == nil {
		t.Fatal("a corrupt counter file was accepted")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
