package dukpt

import "testing"

// benchmarkDecrypt measures what the service does per card-present payment:
// parse the KSN, derive the data key from the BDK, and decrypt a 64-byte
// payload (a typical zero-padded chip read).
func benchmarkDecrypt(b *testing.B, alg Algorithm, bdkHex, ksnHex string) {
	bdk := mustKey(b, bdkHex)
	ksn := mustKSN(b, alg, ksnHex)
	ct, err := EncryptData(bdk, ksn, make([]byte, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(ct)))
	for b.Loop() {
		k, err := ParseKSN(alg, ksnHex)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecryptData(bdk, k, ct); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecryptTDES uses a counter with ten one-bits, the most derivation steps a TDES KSN needs.
func BenchmarkDecryptTDES(b *testing.B) {
	benchmarkDecrypt(b, TDES, "0123456789ABCDEFFEDCBA9876543210", "FFFF9876543210EFFC00")
}

// BenchmarkDecryptAES uses a counter with sixteen one-bits, the most derivation steps an AES-128 KSN needs.
func BenchmarkDecryptAES(b *testing.B) {
	benchmarkDecrypt(b, AES128, "FEDCBA9876543210F1F1F1F1F1F1F1F1", "1234567890123456FFFF0000")
}

// BenchmarkDecryptTDESTypical uses a low counter, as a young terminal sends.
func BenchmarkDecryptTDESTypical(b *testing.B) {
	benchmarkDecrypt(b, TDES, "0123456789ABCDEFFEDCBA9876543210", "FFFF9876543210E00015")
}

// BenchmarkDecryptAESTypical uses a low counter, as a young terminal sends.
func BenchmarkDecryptAESTypical(b *testing.B) {
	benchmarkDecrypt(b, AES128, "FEDCBA9876543210F1F1F1F1F1F1F1F1", "123456789012345600000015")
}

// BenchmarkDeviceTransaction measures one device-side transaction key.
func BenchmarkDeviceTransaction(b *testing.B) {
	for _, td := range testDevices {
		b.Run(td.alg.String(), func(b *testing.B) {
			_, d := newTestDevice(b, td.alg, td.bdk, td.initialKSN)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := d.NextTransaction(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
