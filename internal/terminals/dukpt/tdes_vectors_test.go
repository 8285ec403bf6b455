package dukpt

import (
	"bytes"
	"strings"
	"testing"
)

// TestTDESVectorInputs checks the shared inputs the per-KSN vectors are built from.
func TestTDESVectorInputs(t *testing.T) {
	f := loadTDESVectors(t)
	in := f.Inputs
	wantHex(t, "ISO-0 PIN block", iso0PINBlock(t, in.PIN, in.PAN), in.ClearPINBlockISO0)
	data := make([]byte, 24)
	copy(data, in.TransactionASCII)
	wantHex(t, "zero-padded transaction data", data, in.TransactionDataHex)
	if !strings.Contains(in.MACInput, in.TransactionASCII) {
		t.Errorf("mac_input %q does not name the transaction data", in.MACInput)
	}
	ksn := mustKSN(t, TDES, in.InitialKSN)
	if !ksn.IsInitial() {
		t.Errorf("initial KSN counter = %d, want 0", ksn.Counter())
	}
	ipek, err := DeriveInitialKey(mustKey(t, in.BDK), ksn)
	if err != nil {
		t.Fatal(err)
	}
	wantKey(t, "IPEK", ipek, f.InitialKey.IPEK)
}

// TestTDESTransactionVectors checks every key, PIN block, MAC and ciphertext of
// the X9.24-1:2009 A.4.2 initial sequence and A.4.3 rollover sequence.
func TestTDESTransactionVectors(t *testing.T) {
	f := loadTDESVectors(t)
	bdk := mustKey(t, f.Inputs.BDK)
	pinBlock := unhex(t, f.Inputs.ClearPINBlockISO0)
	msg := []byte(f.Inputs.TransactionASCII)
	data := unhex(t, f.Inputs.TransactionDataHex)
	vectors := append(append([]tdesTransactionVector{}, f.InitialSequence...), f.RolloverSequence...)
	for _, v := range vectors {
		t.Run(v.KSN, func(t *testing.T) {
			ksn := mustKSN(t, TDES, v.KSN)
			tk, err := DeriveTransactionKey(bdk, ksn)
			if err != nil {
				t.Fatal(err)
			}
			wantKey(t, "transaction key", tk, v.TransactionKey)

			keys := map[KeyUsage]string{
				PINEncryption: v.DerivedLocally.PINEncryptionKey,
				MACRequest:    v.DerivedLocally.MACRequestKey,
				MACResponse:   v.DerivedLocally.MACResponseKey,
				DataRequest:   v.DerivedLocally.DataRequestKeyOneWay,
				DataResponse:  v.DerivedLocally.DataResponseKeyOneWay,
			}
			for usage, want := range keys {
				k, err := DeriveWorkingKey(bdk, ksn, usage)
				if err != nil {
					t.Fatal(err)
				}
				wantKey(t, usage.String()+" key", k, want)
			}
			variant, _ := tdesVariant(tk.raw(), DataRequest)
			wantHex(t, "data request variant", variant[:], v.DerivedLocally.DataRequestKeyVariant)

			pinKey, _ := DeriveWorkingKey(bdk, ksn, PINEncryption)
			wantHex(t, "encrypted PIN block", tdesECB(pinKey, pinBlock, false), v.EncryptedPINBlock)

			macReq, _ := DeriveWorkingKey(bdk, ksn, MACRequest)
			macResp, _ := DeriveWorkingKey(bdk, ksn, MACResponse)
			wantHex(t, "X9.19 request MAC", x919MAC(macReq, msg)[:4], v.MACRequest4)
			wantHex(t, "X9.19 response MAC", x919MAC(macResp, msg)[:4], v.MACResponse4)
			wantHex(t, "TDES-CMAC request", cmac(blockCipher(TDES, macReq.raw()), msg), v.CMACRequest)
			wantHex(t, "TDES-CMAC response", cmac(blockCipher(TDES, macResp.raw()), msg), v.CMACResponse)

			ct, err := EncryptData(bdk, ksn, msg)
			if err != nil {
				t.Fatal(err)
			}
			wantHex(t, "EncryptData", ct, v.EncryptedRequestCBC)
			pt, err := DecryptData(bdk, ksn, unhex(t, v.EncryptedRequestCBC))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pt, data) {
				t.Errorf("DecryptData = %X, want %X", pt, data)
			}

			if v.Moov != nil {
				wantHex(t, "X9.19 request MAC (8 bytes)", x919MAC(macReq, msg), v.Moov.MACRequest8)
				wantHex(t, "X9.19 response MAC (8 bytes)", x919MAC(macResp, msg), v.Moov.MACResponse8)
				respKey, _ := DeriveWorkingKey(bdk, ksn, DataResponse)
				wantHex(t, "response data", encryptCBC(TDES, respKey.raw(), msg), v.Moov.EncryptedResponseCBC)
			}
		})
	}
}

// TestTDESOtherVectors checks the track, EMV and PIN vectors of other readers.
func TestTDESOtherVectors(t *testing.T) {
	f := loadTDESVectors(t)
	for _, v := range f.Other {
		t.Run(v.Name, func(t *testing.T) {
			bdk := mustKey(t, v.BDK)
			ksn := mustKSN(t, TDES, v.KSN)
			switch {
			case v.EncryptedPINBlock != "":
				pinKey, err := DeriveWorkingKey(bdk, ksn, PINEncryption)
				if err != nil {
					t.Fatal(err)
				}
				clear := tdesECB(pinKey, unhex(t, v.EncryptedPINBlock), true)
				pan := strings.TrimSuffix(strings.Fields(v.PAN)[0], "F")
				wantHex(t, "clear PIN block", clear, hexUpper(iso0PINBlock(t, v.PIN, pan)))
			case v.KeyUsed != "":
				usage := DataRequest
				if strings.Contains(v.KeyUsed, "PIN variant") {
					usage = PINEncryption // a legacy reader that encrypts track data under the PIN key
				}
				key, err := DeriveWorkingKey(bdk, ksn, usage)
				if err != nil {
					t.Fatal(err)
				}
				wantKey(t, "key used", key, v.KeyUsed)
				checkTrackPlaintext(t, decryptCBC(TDES, key.raw(), unhex(t, v.Ciphertext)), v.PlaintextASCII)
			case v.PlaintextHex != "":
				pt, err := DecryptData(bdk, ksn, unhex(t, v.Ciphertext))
				if err != nil {
					t.Fatal(err)
				}
				wantHex(t, "DecryptData", pt, v.PlaintextHex)
			default:
				pt, err := DecryptData(bdk, ksn, unhex(t, v.Ciphertext))
				if err != nil {
					t.Fatal(err)
				}
				checkTrackPlaintext(t, pt, v.PlaintextASCII)
			}
		})
	}
}

// checkTrackPlaintext compares decrypted track data with the vector's text,
// which may end with a note about trailing NUL padding.
func checkTrackPlaintext(t *testing.T, got []byte, want string) {
	t.Helper()
	want, _, _ = strings.Cut(want, " followed by ")
	if !bytes.HasPrefix(got, []byte(want)) {
		t.Fatalf("plaintext = %q, want prefix %q", got, want)
	}
	if rest := got[len(want):]; len(bytes.Trim(rest, "\x00")) != 0 || len(rest) >= 8 {
		t.Errorf("plaintext padding = %X, want under one block of zeros", rest)
	}
}
