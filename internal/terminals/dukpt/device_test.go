package dukpt

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"testing"
)

// testDevices are the two vector key sets: the ANSI test BDKs and initial KSNs.
var testDevices = []struct {
	alg        Algorithm
	bdk        string
	initialKSN string
}{
	{TDES, "0123456789ABCDEFFEDCBA9876543210", "FFFF9876543210E00000"},
	{AES128, "FEDCBA9876543210F1F1F1F1F1F1F1F1", "123456789012345600000000"},
}

func newTestDevice(t testing.TB, alg Algorithm, bdkHex, ksnHex string) (Key, *Device) {
	t.Helper()
	bdk := mustKey(t, bdkHex)
	initial := mustKSN(t, alg, ksnHex)
	ik, err := DeriveInitialKey(bdk, initial)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDevice(ik, initial)
	if err != nil {
		t.Fatal(err)
	}
	return bdk, d
}

// TestDeviceMatchesHost runs 10,000 consecutive transactions of a freshly
// loaded device and derives each transaction's keys again on the host from the
// BDK: the register algorithm and the host chain must agree on every one.
func TestDeviceMatchesHost(t *testing.T) {
	const transactions = 10000
	for _, td := range testDevices {
		t.Run(td.alg.String(), func(t *testing.T) {
			t.Parallel()
			bdk, d := newTestDevice(t, td.alg, td.bdk, td.initialKSN)
			var last uint32
			for i := 0; i < transactions; i++ {
				ksn, deviceKey, err := d.NextTransaction()
				if err != nil {
					t.Fatalf("transaction %d: %v", i, err)
				}
				c := ksn.Counter()
				if c <= last {
					t.Fatalf("transaction %d: counter %d does not advance past %d", i, c, last)
				}
				if bits.OnesCount32(c) > td.alg.maxOneBits() {
					t.Fatalf("transaction %d: counter %#x has too many one-bits", i, c)
				}
				last = c
				parsed, err := ParseKSN(td.alg, ksn.String())
				if err != nil {
					t.Fatalf("transaction %d: device KSN %s does not parse: %v", i, ksn, err)
				}
				hostKey, err := DeriveTransactionKey(bdk, parsed)
				if err != nil {
					t.Fatal(err)
				}
				if !hostKey.Equal(deviceKey) {
					t.Fatalf("transaction %d (KSN %s): device and host keys differ", i, ksn)
				}
			}
		})
	}
}

// TestDeviceSkipsCounters checks that a TDES device skips counters with more
// than ten one-bits, as in the A.4.3 rollover sequence.
func TestDeviceSkipsCounters(t *testing.T) {
	bdk := mustKey(t, testDevices[0].bdk)
	start := mustKSN(t, TDES, "FFFF9876543210EFF800")
	ik, _ := DeriveInitialKey(bdk, start)
	d, err := ResumeDevice(ik, start)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"FFFF9876543210EFF800", "FFFF9876543210EFF801", "FFFF9876543210EFF802", "FFFF9876543210EFF804",
		"FFFF9876543210EFF808", "FFFF9876543210EFF810", "FFFF9876543210EFF820", "FFFF9876543210EFF840",
		"FFFF9876543210EFF880", "FFFF9876543210EFF900", "FFFF9876543210EFFA00", "FFFF9876543210EFFC00",
		"FFFF9876543210F00000"}
	for _, w := range want {
		ksn, key, err := d.NextTransaction()
		if err != nil {
			t.Fatal(err)
		}
		if ksn.String() != w {
			t.Fatalf("device KSN = %s, want %s", ksn, w)
		}
		hostKey, _ := DeriveTransactionKey(bdk, ksn)
		if !hostKey.Equal(key) {
			t.Fatalf("KSN %s: device and host keys differ", ksn)
		}
	}
}

// TestResumeDevice checks that a resumed device continues exactly like one that
// ran every earlier transaction.
func TestResumeDevice(t *testing.T) {
	for _, td := range testDevices {
		t.Run(td.alg.String(), func(t *testing.T) {
			bdk, fresh := newTestDevice(t, td.alg, td.bdk, td.initialKSN)
			ik, _ := DeriveInitialKey(bdk, mustKSN(t, td.alg, td.initialKSN))
			for i := 0; i < 300; i++ {
				next := fresh.NextKSN()
				resumed, err := ResumeDevice(ik, next)
				if err != nil {
					t.Fatal(err)
				}
				for j := 0; j < 3; j++ {
					k1, key1, err1 := fresh.NextTransaction()
					k2, key2, err2 := resumed.NextTransaction()
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if k1 != k2 || !key1.Equal(key2) {
						t.Fatalf("resumed at %s: transaction %d differs (%s vs %s)", next, j, k1, k2)
					}
				}
			}
		})
	}
}

// TestDeviceExhaustion checks that a device stops at the last counter it may use.
func TestDeviceExhaustion(t *testing.T) {
	tests := []struct {
		alg  Algorithm
		last uint32
	}{
		{TDES, 0x1ff800},     // ten one-bits, the highest 21-bit counter a device reaches
		{AES128, 0xffff0000}, // sixteen one-bits, the highest 32-bit counter
	}
	for _, tt := range tests {
		t.Run(tt.alg.String(), func(t *testing.T) {
			td := testDevices[0]
			if tt.alg == AES128 {
				td = testDevices[1]
			}
			bdk := mustKey(t, td.bdk)
			initial := mustKSN(t, tt.alg, td.initialKSN)
			ik, _ := DeriveInitialKey(bdk, initial)
			last, err := initial.WithCounter(tt.last)
			if err != nil {
				t.Fatal(err)
			}
			d, err := ResumeDevice(ik, last)
			if err != nil {
				t.Fatal(err)
			}
			ksn, key, err := d.NextTransaction()
			if err != nil || ksn != last {
				t.Fatalf("last transaction: %s, %v", ksn, err)
			}
			hostKey, _ := DeriveTransactionKey(bdk, ksn)
			if !hostKey.Equal(key) {
				t.Fatal("last transaction: device and host keys differ")
			}
			if _, _, err := d.NextTransaction(); !errors.Is(err, ErrDeviceExhausted) {
				t.Fatalf("after the last counter: %v, want ErrDeviceExhausted", err)
			}
			if _, _, err := d.EncryptData([]byte{1}); !errors.Is(err, ErrDeviceExhausted) {
				t.Fatalf("EncryptData after the last counter: %v, want ErrDeviceExhausted", err)
			}
		})
	}
}

// TestDeviceEncryptData checks that what a device encrypts the host decrypts.
func TestDeviceEncryptData(t *testing.T) {
	for _, td := range testDevices {
		t.Run(td.alg.String(), func(t *testing.T) {
			bdk, d := newTestDevice(t, td.alg, td.bdk, td.initialKSN)
			for n := 1; n <= 40; n++ {
				plaintext := bytes.Repeat([]byte{0x5a}, n)
				ksn, ct, err := d.EncryptData(plaintext)
				if err != nil {
					t.Fatal(err)
				}
				if len(ct)%td.alg.BlockSize() != 0 || len(ct) < n {
					t.Fatalf("ciphertext length %d for %d bytes", len(ct), n)
				}
				pt, err := DecryptData(bdk, ksn, ct)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(bytes.TrimRight(pt, "\x00"), plaintext) {
					t.Fatalf("round trip of %d bytes = %X", n, pt)
				}
			}
			if _, _, err := d.EncryptData(nil); !errors.Is(err, ErrEmptyPlaintext) {
				t.Errorf("EncryptData(nil) = %v, want ErrEmptyPlaintext", err)
			}
		})
	}
}

// TestDeviceNeverPrintsKeys checks fmt and the device's String.
func TestDeviceNeverPrintsKeys(t *testing.T) {
	_, d := newTestDevice(t, TDES, testDevices[0].bdk, testDevices[0].initialKSN)
	reg := hexUpper(d.registers[0].Bytes())
	type terminal struct{ device *Device }
	type copied struct{ device Device }
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out := fmt.Sprintf(verb, d)
		if !strings.Contains(out, "dukpt.Device") {
			t.Errorf("%s of a device = %q", verb, out)
		}
		for _, o := range []string{out, fmt.Sprintf(verb, terminal{d}), fmt.Sprintf(verb, copied{*d})} {
			if strings.Contains(strings.ToUpper(o), reg) || strings.Contains(o, decimalBytes(d.registers[0].Bytes()[:4])) {
				t.Errorf("%s shows a register: %q", verb, o)
			}
		}
	}
}

// TestNewDeviceRejects checks the device's input errors.
func TestNewDeviceRejects(t *testing.T) {
	ksn := mustKSN(t, TDES, "FFFF9876543210E00001")
	ik := mustKey(t, "6AC292FAA1315B4D858AB3A3D7D5933A")
	if _, err := NewDevice(ik, ksn); !errors.Is(err, ErrInvalidKSN) {
		t.Errorf("NewDevice with counter 1: %v, want ErrInvalidKSN", err)
	}
	if _, err := NewDevice(Key{}, ksn.Initial()); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("NewDevice with no key: %v, want ErrInvalidKey", err)
	}
	if _, err := NewDevice(ik, KSN{}); !errors.Is(err, ErrInvalidKSN) {
		t.Errorf("NewDevice with zero KSN: %v, want ErrInvalidKSN", err)
	}
	if _, err := ResumeDevice(ik, ksn.Initial()); !errors.Is(err, ErrInvalidKSN) {
		t.Errorf("ResumeDevice at counter 0: %v, want ErrInvalidKSN", err)
	}
}

// decimalBytes renders bytes the way fmt prints a byte array, "1 35 69".
func decimalBytes(b []byte) string {
	s := make([]string, len(b))
	for i, c := range b {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, " ")
}
