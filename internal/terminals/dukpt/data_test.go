package dukpt

import (
	"bytes"
	"errors"
	"testing"
)

func TestDecryptDataRejectsLength(t *testing.T) {
	tests := []struct {
		alg Algorithm
		ksn string
		n   int
		err error
	}{
		{TDES, "FFFF9876543210E00001", 0, ErrCiphertextLength},
		{TDES, "FFFF9876543210E00001", 7, ErrCiphertextLength},
		{TDES, "FFFF9876543210E00001", 12, ErrCiphertextLength},
		{TDES, "FFFF9876543210E00001", 8, nil},
		{AES128, "123456789012345600000001", 8, ErrCiphertextLength},
		{AES128, "123456789012345600000001", 24, ErrCiphertextLength},
		{AES128, "123456789012345600000001", 32, nil},
	}
	for _, tt := range tests {
		bdk := mustKey(t, testDevices[0].bdk)
		if tt.alg == AES128 {
			bdk = mustKey(t, testDevices[1].bdk)
		}
		_, err := DecryptData(bdk, mustKSN(t, tt.alg, tt.ksn), make([]byte, tt.n))
		if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("%s, %d bytes: error = %v, want %v", tt.alg, tt.n, err, tt.err)
		}
	}
}

func TestHostRejectsBadInput(t *testing.T) {
	bdk := mustKey(t, testKeyHex)
	ksn := mustKSN(t, TDES, "FFFF9876543210E00001")
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"zero BDK", func() error { _, err := DeriveTransactionKey(Key{}, ksn); return err }, ErrInvalidKey},
		{"zero KSN", func() error { _, err := DeriveTransactionKey(bdk, KSN{}); return err }, ErrInvalidKSN},
		{"initial KSN", func() error { _, err := DeriveWorkingKey(bdk, ksn.Initial(), DataRequest); return err }, ErrInvalidKSN},
		{"initial key of zero KSN", func() error { _, err := DeriveInitialKey(bdk, KSN{}); return err }, ErrInvalidKSN},
		{"unknown TDES usage", func() error { _, err := DeriveWorkingKey(bdk, ksn, 0); return err }, ErrUnsupportedKeyUsage},
		{"unknown AES usage", func() error {
			_, err := DeriveWorkingKey(bdk, mustKSN(t, AES128, "123456789012345600000001"), 42)
			return err
		}, ErrUnsupportedKeyUsage},
		{"working key without transaction key", func() error { _, err := WorkingKey(Key{}, ksn, DataRequest); return err }, ErrInvalidKey},
		{"empty plaintext", func() error { _, err := EncryptData(bdk, ksn, nil); return err }, ErrEmptyPlaintext},
		{"decrypt with zero KSN", func() error { _, err := DecryptData(bdk, KSN{}, make([]byte, 8)); return err }, ErrInvalidKSN},
		{"encrypt with initial KSN", func() error { _, err := EncryptData(bdk, ksn.Initial(), []byte{1}); return err }, ErrInvalidKSN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestEncryptDataPadding checks zero padding to the block size for both algorithms.
func TestEncryptDataPadding(t *testing.T) {
	for _, td := range testDevices {
		bdk := mustKey(t, td.bdk)
		ksn, _ := mustKSN(t, td.alg, td.initialKSN).WithCounter(7)
		bs := td.alg.BlockSize()
		for _, n := range []int{1, bs - 1, bs, bs + 1, 3 * bs} {
			pt := bytes.Repeat([]byte{0xa5}, n)
			ct, err := EncryptData(bdk, ksn, pt)
			if err != nil {
				t.Fatal(err)
			}
			want := (n + bs - 1) / bs * bs
			if len(ct) != want {
				t.Errorf("%s: %d bytes encrypt to %d, want %d", td.alg, n, len(ct), want)
			}
			back, err := DecryptData(bdk, ksn, ct)
			if err != nil {
				t.Fatal(err)
			}
			padded := make([]byte, want)
			copy(padded, pt)
			if !bytes.Equal(back, padded) {
				t.Errorf("%s: round trip of %d bytes = %X", td.alg, n, back)
			}
		}
	}
}

func TestAlgorithmAndUsageNames(t *testing.T) {
	if TDES.String() != "tdes" || AES128.String() != "aes128" || Algorithm(0).String() != "unknown" {
		t.Error("algorithm names")
	}
	if Algorithm(0).BlockSize() != 0 || Algorithm(0).KSNLength() != 0 {
		t.Error("unknown algorithm sizes")
	}
	for u, want := range map[KeyUsage]string{PINEncryption: "pin_encryption", MACRequest: "mac_request",
		MACResponse: "mac_response", DataRequest: "data_request", DataResponse: "data_response", 0: "unknown"} {
		if u.String() != want {
			t.Errorf("KeyUsage(%d).String() = %s, want %s", u, u, want)
		}
	}
}
