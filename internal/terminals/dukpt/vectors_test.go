package dukpt

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/payd/payd/internal/testutil"
)

// The reference vectors live in the shared data folder and are never copied
// into the repository; these types mirror the two JSON files.

type tdesVectorFile struct {
	Inputs struct {
		BDK                string `json:"bdk"`
		InitialKSN         string `json:"initial_ksn"`
		PIN                string `json:"pin"`
		PAN                string `json:"pan"`
		ClearPINBlockISO0  string `json:"clear_pin_block_iso0"`
		TransactionASCII   string `json:"transaction_data_ascii"`
		TransactionDataHex string `json:"transaction_data_for_encryption_hex"`
		MACInput           string `json:"mac_input"`
	} `json:"inputs"`
	InitialKey struct {
		IPEK string `json:"ipek"`
	} `json:"initial_key"`
	InitialSequence  []tdesTransactionVector `json:"initial_sequence_A_4_2"`
	RolloverSequence []tdesTransactionVector `json:"rollover_sequence_A_4_3"`
	Other            []tdesOtherVector       `json:"other_vectors"`
}

type tdesTransactionVector struct {
	KSN                 string `json:"ksn"`
	TransactionKey      string `json:"transaction_key"`
	EncryptedPINBlock   string `json:"encrypted_pin_block"`
	MACRequest4         string `json:"mac_request_x9_19_4byte"`
	MACResponse4        string `json:"mac_response_x9_19_4byte"`
	EncryptedRequestCBC string `json:"encrypted_request_data_cbc"`
	CMACRequest         string `json:"cmac_request_tdes_8byte_openemv_handcrafted"`
	CMACResponse        string `json:"cmac_response_tdes_8byte_openemv_handcrafted"`
	DerivedLocally      struct {
		PINEncryptionKey      string `json:"pin_encryption_key"`
		MACRequestKey         string `json:"mac_request_key"`
		MACResponseKey        string `json:"mac_response_key"`
		DataRequestKeyVariant string `json:"data_request_key_variant"`
		DataRequestKeyOneWay  string `json:"data_request_key_oneway"`
		DataResponseKeyOneWay string `json:"data_response_key_oneway"`
	} `json:"derived_locally"`
	Moov *struct {
		MACRequest8          string `json:"mac_request_x9_19_8byte"`
		MACResponse8         string `json:"mac_response_x9_19_8byte"`
		EncryptedResponseCBC string `json:"encrypted_response_data_cbc"`
	} `json:"moov_io_dukpt_extra"`
}

type tdesOtherVector struct {
	Name              string `json:"name"`
	BDK               string `json:"bdk"`
	KSN               string `json:"ksn"`
	KeyUsed           string `json:"key_used"`
	Ciphertext        string `json:"ciphertext"`
	PlaintextASCII    string `json:"plaintext_ascii"`
	PlaintextHex      string `json:"plaintext_hex"`
	EncryptedPINBlock string `json:"encrypted_pin_block"`
	PAN               string `json:"pan"`
	PIN               string `json:"pin"`
}

type aesVectorFile struct {
	Inputs struct {
		BDK                 string `json:"bdk_aes128"`
		InitialKeyID        string `json:"initial_key_id"`
		BDKID               string `json:"bdk_id"`
		DerivationID        string `json:"derivation_id"`
		InitialKSN          string `json:"initial_ksn_counter_0"`
		PIN                 string `json:"pin"`
		PAN                 string `json:"pan"`
		PINFieldFormat4     string `json:"pin_field_format4"`
		PINFieldRandomFill  string `json:"pin_field_random_fill"`
		PANFieldFormat4     string `json:"pan_field_format4"`
		DerivationDataForIK string `json:"derivation_data_initial_key"`
	} `json:"inputs"`
	InitialKey struct {
		Value string `json:"value"`
	} `json:"initial_key"`
	Counters1To8 []struct {
		KSN           string `json:"ksn"`
		Counter       uint32 `json:"counter"`
		DerivationKey string `json:"derivation_key"`
		WorkingKeys   struct {
			PINEncryption string `json:"pin_encryption"`
			MACGeneration string `json:"mac_generation"`
			DataEncrypt   string `json:"data_encryption_encrypt"`
		} `json:"working_keys_aes128"`
		EncryptedPINBlock string `json:"encrypted_pin_block_format4"`
	} `json:"counters_1_to_8"`
	OtherCounters []struct {
		KSN           string `json:"ksn"`
		DerivationKey string `json:"derivation_key"`
		Note          string `json:"note"`
	} `json:"other_counters"`
	ForagePINKeys []struct {
		Counter uint32 `json:"counter"`
		KSN     string `json:"ksn"`
		PINKey  string `json:"pin_encryption_key_aes128"`
	} `json:"forage_pin_working_keys_counters_1_to_99"`
	ForageRegisters struct {
		Keys []struct {
			Register      int    `json:"register"`
			CounterHex    string `json:"counter_hex"`
			DerivationKey string `json:"derivation_key"`
		} `json:"keys"`
	} `json:"forage_intermediate_registers_after_key_load"`
	Moov struct {
		Vectors []struct {
			KSN            string `json:"ksn"`
			CMACRequest    string `json:"cmac_request"`
			CMACResponse   string `json:"cmac_response"`
			HMACRequest    string `json:"hmac_sha256_request"`
			HMACResponse   string `json:"hmac_sha256_response"`
			AESCBCRequest  string `json:"aes_cbc_request"`
			AESCBCResponse string `json:"aes_cbc_response"`
		} `json:"vectors"`
	} `json:"moov_implementation_vectors"`
}

func loadVectors(t testing.TB, name string, v any) {
	t.Helper()
	path := testutil.TestData(t, "dukpt", name)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
}

func loadTDESVectors(t testing.TB) tdesVectorFile {
	var f tdesVectorFile
	loadVectors(t, "tdes_dukpt_x9.24-1-2009_vectors.json", &f)
	if len(f.InitialSequence) != 21 || len(f.RolloverSequence) != 13 || len(f.Other) != 6 {
		t.Fatalf("tdes vectors: got %d initial, %d rollover, %d other; want 21, 13, 6",
			len(f.InitialSequence), len(f.RolloverSequence), len(f.Other))
	}
	return f
}

func loadAESVectors(t testing.TB) aesVectorFile {
	var f aesVectorFile
	loadVectors(t, "aes128_dukpt_x9.24-3-2017_vectors.json", &f)
	if len(f.Counters1To8) != 8 || len(f.OtherCounters) != 8 || len(f.ForagePINKeys) != 99 ||
		len(f.ForageRegisters.Keys) != 32 || len(f.Moov.Vectors) != 8 {
		t.Fatalf("aes vectors: unexpected counts %d/%d/%d/%d/%d", len(f.Counters1To8), len(f.OtherCounters),
			len(f.ForagePINKeys), len(f.ForageRegisters.Keys), len(f.Moov.Vectors))
	}
	return f
}

// unhex decodes a vector field, taking only its first word (some fields carry a
// note after the value).
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.Fields(s)[0]
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector %q is not hex: %v", s, err)
	}
	return b
}

func mustKey(t testing.TB, s string) Key {
	t.Helper()
	k, err := NewKey(unhex(t, s))
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	return k
}

func mustKSN(t testing.TB, alg Algorithm, s string) KSN {
	t.Helper()
	k, err := ParseKSN(alg, s)
	if err != nil {
		t.Fatalf("ParseKSN(%s): %v", s, err)
	}
	return k
}

func hexUpper(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

func wantHex(t testing.TB, what string, got []byte, want string) {
	t.Helper()
	want = strings.ToUpper(strings.Fields(want)[0])
	if g := hexUpper(got); g != want {
		t.Errorf("%s = %s, want %s", what, g, want)
	}
}

func wantKey(t testing.TB, what string, got Key, want string) {
	t.Helper()
	wantHex(t, what, got.Bytes(), want)
}
