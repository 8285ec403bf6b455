package dukpt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const testKeyHex = "0123456789ABCDEFFEDCBA9876543210"

// TestKeyNeverPrints checks that no printing, logging or marshalling path shows key bytes.
func TestKeyNeverPrints(t *testing.T) {
	k := mustKey(t, testKeyHex)
	type wrapper struct {
		Key    Key
		hidden Key
	}
	w := wrapper{Key: k, hidden: k}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		outputs = append(outputs, fmt.Sprintf(verb, k), fmt.Sprintf(verb, &k), fmt.Sprintf(verb, w))
	}
	outputs = append(outputs, k.String(), k.GoString(), fmt.Sprint(k), fmt.Sprintln(k))
	j, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(j))
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("key", "key", k, "wrapped", w)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("key", "key", k, "wrapped", w)
	outputs = append(outputs, buf.String())
	for _, out := range outputs {
		up := strings.ToUpper(out)
		// Hex in either case, and the decimal bytes fmt shows for arrays.
		for _, frag := range []string{testKeyHex[:8], testKeyHex[16:24], "1 35 69 103", "254 220 186"} {
			if strings.Contains(up, frag) {
				t.Errorf("key bytes in output %q", out)
			}
		}
	}
}

func TestParseKey(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"valid", testKeyHex, nil},
		{"lowercase", strings.ToLower(testKeyHex), nil},
		{"short", testKeyHex[:30], ErrInvalidKey},
		{"double-length TDES only", testKeyHex + testKeyHex[:16], ErrInvalidKey},
		{"not hex", "Z" + testKeyHex[1:], ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseKey(tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(strings.ToUpper(err.Error()), testKeyHex[2:10]) {
					t.Errorf("error repeats the key: %v", err)
				}
				return
			}
			if !bytes.Equal(k.Bytes(), unhex(t, testKeyHex)) || k.IsZero() {
				t.Errorf("Bytes() = %X", k.Bytes())
			}
		})
	}
}

func TestKeyEqualAndCopy(t *testing.T) {
	a := mustKey(t, testKeyHex)
	b, _ := NewKey(unhex(t, testKeyHex))
	if !a.Equal(b) || a.Equal(Key{}) || (Key{}).Equal(a) || !(Key{}).IsZero() {
		t.Error("Equal/IsZero disagree")
	}
	raw := a.Bytes()
	raw[0] ^= 0xff
	if !a.Equal(b) {
		t.Error("Bytes() returned the key's own storage")
	}
}

// TestErrorsNeverShowKeys drives every error path with real key material.
func TestErrorsNeverShowKeys(t *testing.T) {
	bdk := mustKey(t, testKeyHex)
	ksn := mustKSN(t, TDES, "FFFF9876543210E00001")
	var errs []error
	_, err := DecryptData(bdk, ksn, make([]byte, 7))
	errs = append(errs, err)
	_, err = DeriveWorkingKey(bdk, ksn, KeyUsage(99))
	errs = append(errs, err)
	_, err = DeriveTransactionKey(bdk, ksn.Initial())
	errs = append(errs, err)
	_, err = ParseKey(testKeyHex[:31] + "X")
	errs = append(errs, err)
	for _, err := range errs {
		if err == nil {
			t.Fatal("expected an error")
		}
		if strings.Contains(strings.ToUpper(err.Error()), testKeyHex[:8]) {
			t.Errorf("error shows key material: %v", err)
		}
	}
}
