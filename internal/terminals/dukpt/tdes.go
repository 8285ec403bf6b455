package dukpt

import (
	"crypto/des"
	"encoding/binary"
)

// TDES DUKPT per ANSI X9.24-1:2009. Keys are double-length (K1 K2, used as
// K1 K2 K1); the counter is the rightmost 21 bits of the 10-byte KSN.

// tdesKeyRegisterMask is XORed into a key to derive the left half of the
// initial key and of every non-reversible key generation.
var tdesKeyRegisterMask = [KeySize]byte{
	0xc0, 0xc0, 0xc0, 0xc0, 0, 0, 0, 0, 0xc0, 0xc0, 0xc0, 0xc0, 0, 0, 0, 0,
}

// tdesVariantByte is the byte position, in each key half, of the 0xFF variant
// constant for a usage (X9.24-1:2009 Table A-1 and the data variants of
// X9.24-1:2009 A.6).
var tdesVariantByte = map[KeyUsage]int{
	PINEncryption: 7, // 00000000000000FF
	MACRequest:    6, // 000000000000FF00
	MACResponse:   4, // 00000000FF000000
	DataRequest:   5, // 0000000000FF0000
	DataResponse:  3, // 000000FF00000000
}

// tdesEncryptBlock encrypts one 8-byte block in place under a double-length key (ECB).
func tdesEncryptBlock(key [KeySize]byte, block []byte) {
	blockCipher(TDES, key).Encrypt(block, block)
}

// tdesInitialKey derives the initial PIN encryption key (IPEK) from the BDK and
// the leftmost 8 bytes of the KSN with its counter cleared.
func tdesInitialKey(bdk [KeySize]byte, ksn KSN) [KeySize]byte {
	var iksn [8]byte
	copy(iksn[:], ksn.b[:8])
	iksn[7] &^= 0x1f
	var ipek [KeySize]byte
	copy(ipek[:8], iksn[:])
	tdesEncryptBlock(bdk, ipek[:8])
	masked := xorKey(bdk, tdesKeyRegisterMask)
	copy(ipek[8:], iksn[:])
	tdesEncryptBlock(masked, ipek[8:])
	return ipek
}

// tdesNonReversibleKey is the standard's non-reversible key generation process:
// from a key and the 64-bit KSN register it derives the next key.
func tdesNonReversibleKey(key [KeySize]byte, ksnRegister uint64) [KeySize]byte {
	var out [KeySize]byte
	tdesHalf(out[8:], key, ksnRegister)
	tdesHalf(out[:8], xorKey(key, tdesKeyRegisterMask), ksnRegister)
	return out
}

// tdesHalf computes one half of a non-reversible key: DES under the key's left
// half of (register XOR right half), XORed again with the right half.
func tdesHalf(dst []byte, key [KeySize]byte, ksnRegister uint64) {
	right := binary.BigEndian.Uint64(key[8:])
	c, err := des.NewCipher(key[:8])
	if err != nil {
		panic(err) // unreachable: the key length is fixed
	}
	binary.BigEndian.PutUint64(dst, ksnRegister^right)
	c.Encrypt(dst, dst)
	binary.BigEndian.PutUint64(dst, binary.BigEndian.Uint64(dst)^right)
}

// tdesKSNRegister returns the rightmost 64 bits of the KSN with the counter
// replaced by counter, the input of the non-reversible key generation.
func tdesKSNRegister(ksn KSN, counter uint32) uint64 {
	const counterMask = 1<<tdesCounterBits - 1
	reg := binary.BigEndian.Uint64(ksn.b[2:10])
	return reg&^counterMask | uint64(counter)
}

// tdesTransactionKey derives the key for the KSN's counter from the IPEK the
// host's way: one non-reversible step for each one-bit of the counter, from the
// most significant down.
func tdesTransactionKey(ipek [KeySize]byte, ksn KSN) [KeySize]byte {
	counter := ksn.Counter()
	key := ipek
	var partial uint32
	for bit := uint32(1) << (tdesCounterBits - 1); bit != 0; bit >>= 1 {
		if counter&bit == 0 {
			continue
		}
		partial |= bit
		key = tdesNonReversibleKey(key, tdesKSNRegister(ksn, partial))
	}
	return key
}

// tdesVariant XORs the usage's variant constant into both halves of the key.
func tdesVariant(key [KeySize]byte, usage KeyUsage) ([KeySize]byte, bool) {
	pos, ok := tdesVariantByte[usage]
	if !ok {
		return key, false
	}
	key[pos] ^= 0xff
	key[8+pos] ^= 0xff
	return key, true
}

// tdesWorkingKey derives a usage's working key from a transaction key. The data
// keys go one step further than the bare variant: each half of the variant key is
// TDES-encrypted under the variant key itself, which is the data key the
// X9.24-1:2009 examples encrypt with.
func tdesWorkingKey(transactionKey [KeySize]byte, usage KeyUsage) ([KeySize]byte, bool) {
	key, ok := tdesVariant(transactionKey, usage)
	if !ok {
		return key, false
	}
	if usage == DataRequest || usage == DataResponse {
		key = tdesOneWay(key)
	}
	return key, true
}

// tdesOneWay encrypts each half of a key under the whole key.
func tdesOneWay(key [KeySize]byte) [KeySize]byte {
	out := key
	tdesEncryptBlock(key, out[:8])
	tdesEncryptBlock(key, out[8:])
	return out
}

func xorKey(a, b [KeySize]byte) [KeySize]byte {
	for i := range a {
		a[i] ^= b[i]
	}
	return a
}
