package dukpt

import (
	"crypto/aes"
	"encoding/binary"
)

// AES-128 DUKPT per ANSI X9.24-3-2017. Every key is one AES-ECB encryption of a
// 16-byte derivation data block under its parent key.

// Key usage indicators of the derivation data (X9.24-3-2017 Table 2).
const (
	aesUsageKeyDerivation        uint16 = 0x8000
	aesUsageKeyDerivationInitial uint16 = 0x8001
)

// Algorithm indicators of the derivation data (X9.24-3-2017 Table 3).
const (
	aesAlgorithmAES128 uint16 = 0x0002
	aesAlgorithmHMAC   uint16 = 0x0005
)

// aesKeyUsage maps a working key usage to its key usage indicator.
var aesKeyUsage = map[KeyUsage]uint16{
	PINEncryption: 0x1000,
	MACRequest:    0x2000,
	MACResponse:   0x2001,
	DataRequest:   0x3000,
	DataResponse:  0x3001,
}

// aesDerivationData builds a derivation data block: version 01, block counter
// 01, key usage, algorithm, key length in bits, then 8 bytes of key identity.
func aesDerivationData(usage, algorithm uint16, id [8]byte) [16]byte {
	var d [16]byte
	d[0] = 0x01 // version
	d[1] = 0x01 // key block counter: one block suffices for 128-bit keys
	binary.BigEndian.PutUint16(d[2:], usage)
	binary.BigEndian.PutUint16(d[4:], algorithm)
	binary.BigEndian.PutUint16(d[6:], 128)
	copy(d[8:], id[:])
	return d
}

// aesDeriveKey encrypts the derivation data under the parent key.
func aesDeriveKey(parent [KeySize]byte, data [16]byte) [KeySize]byte {
	c, err := aes.NewCipher(parent[:])
	if err != nil {
		panic(err) // unreachable: the key length is fixed
	}
	var out [KeySize]byte
	c.Encrypt(out[:], data[:])
	return out
}

// aesInitialKeyID returns the 8-byte initial key ID of an AES-128 KSN.
func aesInitialKeyID(ksn KSN) [8]byte {
	var id [8]byte
	copy(id[:], ksn.b[:8])
	return id
}

// aesCounterID is the key identity of a derivation or working key: the
// rightmost 4 bytes of the initial key ID followed by the counter.
func aesCounterID(ikid [8]byte, counter uint32) [8]byte {
	var id [8]byte
	copy(id[:4], ikid[4:])
	binary.BigEndian.PutUint32(id[4:], counter)
	return id
}

// aesInitialKey derives the device's initial key from the BDK and the initial key ID.
func aesInitialKey(bdk [KeySize]byte, ikid [8]byte) [KeySize]byte {
	return aesDeriveKey(bdk, aesDerivationData(aesUsageKeyDerivationInitial, aesAlgorithmAES128, ikid))
}

// aesIntermediateKey derives the derivation key for counter from its parent.
func aesIntermediateKey(parent [KeySize]byte, ikid [8]byte, counter uint32) [KeySize]byte {
	return aesDeriveKey(parent, aesDerivationData(aesUsageKeyDerivation, aesAlgorithmAES128, aesCounterID(ikid, counter)))
}

// aesTransactionKey derives the derivation key for the counter from the initial
// key the host's way: one step for each one-bit, from the most significant down.
func aesTransactionKey(ik [KeySize]byte, ikid [8]byte, counter uint32) [KeySize]byte {
	key := ik
	var partial uint32
	for bit := uint32(1) << (aesCounterBits - 1); bit != 0; bit >>= 1 {
		if counter&bit == 0 {
			continue
		}
		partial |= bit
		key = aesIntermediateKey(key, ikid, partial)
	}
	return key
}

// aesWorkingKey derives a 128-bit working key of the given usage indicator and
// algorithm from the transaction's derivation key.
func aesWorkingKey(derivationKey [KeySize]byte, ikid [8]byte, counter uint32, usage, algorithm uint16) [KeySize]byte {
	return aesDeriveKey(derivationKey, aesDerivationData(usage, algorithm, aesCounterID(ikid, counter)))
}
