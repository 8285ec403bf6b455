package dukpt

import (
	"errors"
	"testing"
)

func TestParseKSN(t *testing.T) {
	tests := []struct {
		name      string
		alg       Algorithm
		in        string
		wantErr   error
		counter   uint32
		initialID string
	}{
		{"tdes first", TDES, "FFFF9876543210E00001", nil, 1, "FFFF9876543210E00000"},
		{"tdes lowercase", TDES, "ffff9876543210e00002", nil, 2, "FFFF9876543210E00000"},
		{"tdes initial", TDES, "FFFF9876543210E00000", nil, 0, "FFFF9876543210E00000"},
		{"tdes rollover", TDES, "FFFF9876543210F00000", nil, 0x100000, "FFFF9876543210E00000"},
		{"tdes ten one-bits", TDES, "FFFF9876543210EFFC00", nil, 0xffc00, "FFFF9876543210E00000"},
		{"tdes eleven one-bits", TDES, "FFFF9876543210E007FF", ErrInvalidKSN, 0, ""},
		{"tdes too short", TDES, "FFFF9876543210E000", ErrInvalidKSN, 0, ""},
		{"tdes too long", TDES, "FFFF9876543210E0000100", ErrInvalidKSN, 0, ""},
		{"tdes aes length", TDES, "123456789012345600000001", ErrInvalidKSN, 0, ""},
		{"tdes not hex", TDES, "FFFF9876543210E0000G", ErrInvalidKSN, 0, ""},
		{"tdes spaces", TDES, "FFFF9876543210E 0001", ErrInvalidKSN, 0, ""},
		{"aes first", AES128, "123456789012345600000001", nil, 1, "1234567890123456"},
		{"aes sixteen one-bits", AES128, "1234567890123456FFFF0000", nil, 0xffff0000, "1234567890123456"},
		{"aes seventeen one-bits", AES128, "12345678901234560001FFFF", ErrInvalidKSN, 0, ""},
		{"aes tdes length", AES128, "FFFF9876543210E00001", ErrInvalidKSN, 0, ""},
		{"aes empty", AES128, "", ErrInvalidKSN, 0, ""},
		{"unknown algorithm", Algorithm(9), "FFFF9876543210E00001", ErrUnsupportedAlgorithm, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseKSN(tt.alg, tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("ParseKSN(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if k.Counter() != tt.counter {
				t.Errorf("Counter() = %#x, want %#x", k.Counter(), tt.counter)
			}
			if k.InitialKeyID() != tt.initialID {
				t.Errorf("InitialKeyID() = %s, want %s", k.InitialKeyID(), tt.initialID)
			}
			if k.IsInitial() != (tt.counter == 0) {
				t.Errorf("IsInitial() = %v", k.IsInitial())
			}
			if k.Algorithm() != tt.alg || len(k.Bytes()) != tt.alg.KSNLength() {
				t.Errorf("Algorithm() = %s, %d bytes", k.Algorithm(), len(k.Bytes()))
			}
			again, err := NewKSN(tt.alg, k.Bytes())
			if err != nil || again != k {
				t.Errorf("NewKSN(Bytes()) = %s, %v", again, err)
			}
			if p, _ := ParseKSN(tt.alg, k.String()); p != k {
				t.Errorf("ParseKSN(String()) = %s, want %s", p, k)
			}
		})
	}
}

func TestKSNWithCounter(t *testing.T) {
	tdes := mustKSN(t, TDES, "FFFF9876543210E00001")
	tests := []struct {
		name    string
		ksn     KSN
		counter uint32
		want    string
		wantErr error
	}{
		{"tdes", tdes, 0x1ff800, "FFFF9876543210FFF800", nil},
		{"tdes zero", tdes, 0, "FFFF9876543210E00000", nil},
		{"tdes over 21 bits", tdes, 0x200000, "", ErrInvalidKSN},
		{"tdes too many one-bits", tdes, 0x7ff, "", ErrInvalidKSN},
		{"aes", mustKSN(t, AES128, "123456789012345600000001"), 0xfffe8000, "1234567890123456FFFE8000", nil},
		{"zero KSN", KSN{}, 1, "", ErrInvalidKSN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.ksn.WithCounter(tt.counter)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err == nil && got.String() != tt.want {
				t.Errorf("WithCounter(%#x) = %s, want %s", tt.counter, got, tt.want)
			}
		})
	}
}

func TestNewKSNRejectsLength(t *testing.T) {
	if _, err := NewKSN(TDES, make([]byte, 12)); !errors.Is(err, ErrInvalidKSN) {
		t.Errorf("NewKSN(TDES, 12 bytes) = %v, want ErrInvalidKSN", err)
	}
	if _, err := NewKSN(0, make([]byte, 10)); !errors.Is(err, ErrUnsupportedAlgorithm) {
		t.Errorf("NewKSN(0, ...) = %v, want ErrUnsupportedAlgorithm", err)
	}
	if !(KSN{}).IsZero() || (KSN{}).String() != "" {
		t.Errorf("zero KSN: IsZero %v, String %q", (KSN{}).IsZero(), (KSN{}).String())
	}
}
