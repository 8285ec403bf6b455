package dukpt

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestAESVectorInputs checks the shared inputs of the X9.24-3-2017 vectors.
func TestAESVectorInputs(t *testing.T) {
	f := loadAESVectors(t)
	in := f.Inputs
	if in.BDKID+in.DerivationID != in.InitialKeyID {
		t.Errorf("BDK ID %s + derivation ID %s != initial key ID %s", in.BDKID, in.DerivationID, in.InitialKeyID)
	}
	ksn := mustKSN(t, AES128, in.InitialKSN)
	if !ksn.IsInitial() || ksn.InitialKeyID() != in.InitialKeyID {
		t.Errorf("initial KSN: counter %d, initial key ID %s", ksn.Counter(), ksn.InitialKeyID())
	}
	var ikid [8]byte
	copy(ikid[:], unhex(t, in.InitialKeyID))
	data := aesDerivationData(aesUsageKeyDerivationInitial, aesAlgorithmAES128, ikid)
	wantHex(t, "initial key derivation data", data[:], in.DerivationDataForIK)
	wantHex(t, "format 4 PIN field", iso4PINField(t, in.PIN, unhex(t, in.PINFieldRandomFill)), in.PINFieldFormat4)
	wantHex(t, "format 4 PAN field", iso4PANField(t, in.PAN), in.PANFieldFormat4)

	ik, err := DeriveInitialKey(mustKey(t, in.BDK), ksn)
	if err != nil {
		t.Fatal(err)
	}
	wantKey(t, "initial key", ik, f.InitialKey.Value)
}

// TestAESCounterVectors checks derivation keys, working keys and format 4 PIN
// blocks for counters 1 to 8.
func TestAESCounterVectors(t *testing.T) {
	f := loadAESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	pinField := unhex(t, f.Inputs.PINFieldFormat4)
	panField := unhex(t, f.Inputs.PANFieldFormat4)
	for _, v := range f.Counters1To8 {
		t.Run(v.KSN, func(t *testing.T) {
			ksn := mustKSN(t, AES128, v.KSN)
			if ksn.Counter() != v.Counter {
				t.Errorf("Counter() = %d, want %d", ksn.Counter(), v.Counter)
			}
			tk, err := DeriveTransactionKey(bdk, ksn)
			if err != nil {
				t.Fatal(err)
			}
			wantKey(t, "derivation key", tk, v.DerivationKey)
			keys := map[KeyUsage]string{
				PINEncryption: v.WorkingKeys.PINEncryption,
				MACRequest:    v.WorkingKeys.MACGeneration,
				DataRequest:   v.WorkingKeys.DataEncrypt,
			}
			for usage, want := range keys {
				k, err := DeriveWorkingKey(bdk, ksn, usage)
				if err != nil {
					t.Fatal(err)
				}
				wantKey(t, usage.String()+" key", k, want)
			}
			pinKey, _ := DeriveWorkingKey(bdk, ksn, PINEncryption)
			wantHex(t, "format 4 PIN block", iso4EncryptPINBlock(pinKey, pinField, panField), v.EncryptedPINBlock)
		})
	}
}

// TestAESOtherCounters checks the high counters of the supplement, including
// 0x1FFFF, which no device reaches: ParseKSN must refuse it, while the raw
// derivation still reproduces the supplement's value.
func TestAESOtherCounters(t *testing.T) {
	f := loadAESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	for _, v := range f.OtherCounters {
		t.Run(v.KSN, func(t *testing.T) {
			ksn, err := ParseKSN(AES128, v.KSN)
			if strings.Contains(v.Note, "NOT a valid") {
				if !errors.Is(err, ErrInvalidKSN) {
					t.Fatalf("ParseKSN(%s) error = %v, want ErrInvalidKSN", v.KSN, err)
				}
				raw := unhex(t, v.KSN)
				var ikid [8]byte
				copy(ikid[:], raw[:8])
				counter := uint32(raw[8])<<24 | uint32(raw[9])<<16 | uint32(raw[10])<<8 | uint32(raw[11])
				got := aesTransactionKey(aesInitialKey(bdk.raw(), ikid), ikid, counter)
				wantHex(t, "raw derivation key", got[:], v.DerivationKey)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tk, err := DeriveTransactionKey(bdk, ksn)
			if err != nil {
				t.Fatal(err)
			}
			wantKey(t, "derivation key", tk, v.DerivationKey)
		})
	}
}

// TestAESForagePINKeys checks the PIN working keys for counters 1 to 99.
func TestAESForagePINKeys(t *testing.T) {
	f := loadAESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	for _, v := range f.ForagePINKeys {
		ksn := mustKSN(t, AES128, v.KSN)
		if ksn.Counter() != v.Counter {
			t.Errorf("%s: Counter() = %d, want %d", v.KSN, ksn.Counter(), v.Counter)
		}
		k, err := DeriveWorkingKey(bdk, ksn, PINEncryption)
		if err != nil {
			t.Fatal(err)
		}
		wantKey(t, v.KSN+" PIN key", k, v.PINKey)
	}
}

// TestAESDeviceRegistersAfterKeyLoad checks the 32 intermediate derivation key
// registers of a freshly loaded device, and the host's key for each counter 2^i.
func TestAESDeviceRegistersAfterKeyLoad(t *testing.T) {
	f := loadAESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	initial := mustKSN(t, AES128, f.Inputs.InitialKSN)
	ik, err := DeriveInitialKey(bdk, initial)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDevice(ik, initial)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.ForageRegisters.Keys {
		name := "register " + strconv.Itoa(r.Register)
		if d.registers[r.Register].IsZero() {
			t.Fatalf("%s not in use", name)
		}
		wantKey(t, name, d.registers[r.Register], r.DerivationKey)
		counter, err := strconv.ParseUint(r.CounterHex, 16, 32)
		if err != nil || counter != 1<<r.Register {
			t.Fatalf("%s: counter_hex %s, want 1<<%d", name, r.CounterHex, r.Register)
		}
		ksn, err := initial.WithCounter(uint32(counter))
		if err != nil {
			t.Fatal(err)
		}
		tk, err := DeriveTransactionKey(bdk, ksn)
		if err != nil {
			t.Fatal(err)
		}
		wantKey(t, name+" host key", tk, r.DerivationKey)
	}
}

// TestAESMoovVectors checks the CMAC, HMAC-SHA256 and AES-CBC outputs moov-io
// produced with the MAC, HMAC and data working keys.
func TestAESMoovVectors(t *testing.T) {
	f := loadAESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	msg := []byte("4012345678909D987")
	for _, v := range f.Moov.Vectors {
		t.Run(v.KSN, func(t *testing.T) {
			ksn := mustKSN(t, AES128, v.KSN)
			key := func(u KeyUsage) Key {
				k, err := DeriveWorkingKey(bdk, ksn, u)
				if err != nil {
					t.Fatal(err)
				}
				return k
			}
			wantHex(t, "CMAC request", cmac(blockCipher(AES128, key(MACRequest).raw()), msg), v.CMACRequest)
			wantHex(t, "CMAC response", cmac(blockCipher(AES128, key(MACResponse).raw()), msg), v.CMACResponse)

			tk, _ := DeriveTransactionKey(bdk, ksn)
			ikid := aesInitialKeyID(ksn)
			for _, h := range []struct {
				usage uint16
				want  string
			}{{0x2000, v.HMACRequest}, {0x2001, v.HMACResponse}} {
				hk := aesWorkingKey(tk.raw(), ikid, ksn.Counter(), h.usage, aesAlgorithmHMAC)
				mac := hmac.New(sha256.New, hk[:])
				mac.Write(msg)
				wantHex(t, "HMAC-SHA256 "+strconv.FormatUint(uint64(h.usage), 16), mac.Sum(nil), h.want)
			}

			padded := make([]byte, 32)
			copy(padded, msg)
			ct, err := EncryptData(bdk, ksn, msg)
			if err != nil {
				t.Fatal(err)
			}
			wantHex(t, "EncryptData", ct, v.AESCBCRequest)
			pt, err := DecryptData(bdk, ksn, unhex(t, v.AESCBCRequest))
			if err != nil {
				t.Fatal(err)
			}
			wantHex(t, "DecryptData", pt, hexUpper(padded))
			wantHex(t, "response data", encryptCBC(AES128, key(DataResponse).raw(), msg), v.AESCBCResponse)
		})
	}
}
