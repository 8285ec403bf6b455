package terminals

import (
	"encoding/hex"
	"regexp"
	"testing"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/terminals/dukpt"
)

// A young terminal's KSN of each model (counter 0x15, three one-bits).
var benchKSN = map[Model]string{Countertop: "FFFF9876543210E00015", Mobile: "123456789012345600000015"}

// encryptedRead returns a chip read of 4242424242424242 for 500 DJF encrypted
// for the model's bench KSN, in hex.
func encryptedRead(tb testing.TB, m Model) (ksnHex, payloadHex string) {
	tb.Helper()
	alg, _ := m.Algorithm()
	ksn, err := dukpt.ParseKSN(alg, benchKSN[m])
	if err != nil {
		tb.Fatal(err)
	}
	read, err := card.EncodeChipRead("4242424242424242", 2030, time.December, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 500, "262")
	if err != nil {
		tb.Fatal(err)
	}
	bdk, _ := SandboxBDK(m)
	ct, err := dukpt.EncryptData(bdk, ksn, read)
	if err != nil {
		tb.Fatal(err)
	}
	return ksn.String(), hex.EncodeToString(ct)
}

// decryptRequest is the pipeline's CPU work for one payment: parse the KSN,
// decode the payload, derive the data key from the BDK, decrypt, parse the
// BER-TLV, check the card and compare it with the request.
func decryptRequest(m Model, ksnHex, payloadHex string, amount int64, currency string) (card.Read, error) {
	alg, _ := m.Algorithm()
	ksn, err := dukpt.ParseKSN(alg, ksnHex)
	if err == nil && ksn.IsInitial() {
		err = dukpt.ErrInvalidKSN
	}
	if err != nil {
		return card.Read{}, decryptionFailed("ksn", "bad ksn", err)
	}
	ct, err := decodePayload(alg, payloadHex)
	if err != nil {
		return card.Read{}, err
	}
	bdk, _ := SandboxBDK(m)
	read, err := decryptRead(bdk, ksn, ct)
	if err != nil {
		return card.Read{}, err
	}
	return read, checkAgainstChip(read, amount, currency)
}

func TestDecryptRequest(t *testing.T) {
	for _, m := range Models {
		ksn, payload := encryptedRead(t, m)
		read, err := decryptRequest(m, ksn, payload, 500, "DJF")
		if err != nil || read.Last4() != "4242" || read.Brand() != card.BrandVisa || read.EntryMode() != card.EntryModeChip {
			t.Fatalf("%s: %v %v", m, read, err)
		}
		if _, err := decryptRequest(m, ksn, payload, 500, "USD"); !errs.IsCode(err, "currency_mismatch") {
			t.Fatalf("%s: currency mismatch: %v", m, err)
		}
	}
}

func BenchmarkDecryptPayment(b *testing.B) {
	for _, m := range Models {
		b.Run(string(m), func(b *testing.B) {
			ksn, payload := encryptedRead(b, m)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decryptRequest(m, ksn, payload, 500, "DJF"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var digitRun = regexp.MustCompile(`[0-9]{8,}`)

// FuzzDecryptPayment feeds arbitrary KSNs and payloads to the decryption
// step: it never panics, refuses with decryption_failed (or a mismatch), and
// never puts a run of 8 digits (a PAN's worth) into an error message.
func FuzzDecryptPayment(f *testing.F) {
	for _, m := range Models {
		ksn, payload := encryptedRead(f, m)
		f.Add(string(m), ksn, payload)
		f.Add(string(m), ksn, payload[:len(payload)-2])
		f.Add(string(m), ksn, "00"+payload[2:])
	}
	f.Fuzz(func(t *testing.T, model, ksnHex, payloadHex string) {
		m := Model(model)
		if _, ok := m.Algorithm(); !ok {
			m = Countertop
		}
		read, err := decryptRequest(m, ksnHex, payloadHex, 500, "DJF")
		if err == nil {
			if len(read.Last4()) != 4 {
				t.Fatalf("accepted a read without last4: %v", read)
			}
			return
		}
		e := errs.As(err)
		if e == nil || e.Kind != errs.KindInvalid {
			t.Fatalf("not a 400: %v", err)
		}
		if digitRun.MatchString(e.Message) || digitRun.MatchString(e.Error()) {
			t.Fatalf("an error message carries a digit run: %q", e.Message)
		}
	})
}
