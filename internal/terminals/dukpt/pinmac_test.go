package dukpt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"encoding/hex"
	"strings"
	"testing"
)

// Test-only PIN block and MAC constructions, written from ISO 9564-1, ANSI
// X9.19 and NIST SP 800-38B, so the vectors' PIN blocks and MACs can check the
// PIN and MAC working keys. payd itself encrypts no PINs and computes no MACs.

// iso0PINBlock returns the clear ISO 9564-1 format 0 PIN block.
func iso0PINBlock(t testing.TB, pin, pan string) []byte {
	t.Helper()
	p := "0" + string(rune('0'+len(pin))) + pin + strings.Repeat("F", 14-len(pin))
	digits := pan[:len(pan)-1] // without the check digit
	a := "0000" + digits[len(digits)-12:]
	pb, _ := hex.DecodeString(p)
	ab, _ := hex.DecodeString(a)
	for i := range pb {
		pb[i] ^= ab[i]
	}
	return pb
}

// iso4PINField builds the AES format 4 plaintext PIN field.
func iso4PINField(t testing.TB, pin string, randomFill []byte) []byte {
	t.Helper()
	s := "4" + string(rune('0'+len(pin))) + pin + strings.Repeat("A", 14-len(pin))
	b, _ := hex.DecodeString(s)
	return append(b, randomFill...)
}

// iso4PANField builds the AES format 4 plaintext PAN field.
func iso4PANField(t testing.TB, pan string) []byte {
	t.Helper()
	s := string(rune('0'+len(pan)-12)) + pan // length indicator M, then the PAN
	s += strings.Repeat("0", 32-len(s))
	b, _ := hex.DecodeString(s)
	return b
}

// iso4EncryptPINBlock enciphers a format 4 PIN block: E(K, E(K, pin) XOR pan).
func iso4EncryptPINBlock(key Key, pinField, panField []byte) []byte {
	c, _ := aes.NewCipher(key.Bytes())
	out := make([]byte, 16)
	c.Encrypt(out, pinField)
	for i := range out {
		out[i] ^= panField[i]
	}
	c.Encrypt(out, out)
	return out
}

// tdesECB encrypts or decrypts one block under a double-length key.
func tdesECB(key Key, block []byte, decrypt bool) []byte {
	c := blockCipher(TDES, key.raw())
	out := make([]byte, 8)
	if decrypt {
		c.Decrypt(out, block)
	} else {
		c.Encrypt(out, block)
	}
	return out
}

// x919MAC is the ANSI X9.19 retail MAC: single-DES CBC-MAC under the left half,
// then the last block decrypted under the right half and encrypted under the left.
func x919MAC(key Key, msg []byte) []byte {
	data := make([]byte, (len(msg)+7)/8*8)
	copy(data, msg)
	left, _ := des.NewCipher(key.Bytes()[:8])
	right, _ := des.NewCipher(key.Bytes()[8:])
	mac := make([]byte, 8)
	for i := 0; i < len(data); i += 8 {
		for j := range mac {
			mac[j] ^= data[i+j]
		}
		left.Encrypt(mac, mac)
	}
	right.Decrypt(mac, mac)
	left.Encrypt(mac, mac)
	return mac
}

// cmac is NIST SP 800-38B CMAC over any block cipher.
func cmac(c cipher.Block, msg []byte) []byte {
	bs := c.BlockSize()
	rb := byte(0x87)
	if bs == 8 {
		rb = 0x1b
	}
	l := make([]byte, bs)
	c.Encrypt(l, l)
	k1 := doubleBlock(l, rb)
	k2 := doubleBlock(k1, rb)
	n := (len(msg) + bs - 1) / bs
	last := make([]byte, bs)
	if n > 0 && len(msg)%bs == 0 {
		copy(last, msg[(n-1)*bs:])
		xorInto(last, k1)
	} else {
		if n == 0 {
			n = 1
		}
		rest := msg[(n-1)*bs:]
		copy(last, rest)
		last[len(rest)] = 0x80
		xorInto(last, k2)
	}
	x := make([]byte, bs)
	for i := 0; i < n-1; i++ {
		xorInto(x, msg[i*bs:(i+1)*bs])
		c.Encrypt(x, x)
	}
	xorInto(x, last)
	c.Encrypt(x, x)
	return x
}

func doubleBlock(b []byte, rb byte) []byte {
	out := make([]byte, len(b))
	var carry byte
	for i := len(b) - 1; i >= 0; i-- {
		out[i] = b[i]<<1 | carry
		carry = b[i] >> 7
	}
	if b[0]&0x80 != 0 {
		out[len(out)-1] ^= rb
	}
	return out
}

func xorInto(dst, src []byte) {
	for i := range dst {
		dst[i] ^= src[i]
	}
}

// TestCMACReference checks the test CMAC against the NIST SP 800-38B AES-128 examples.
func TestCMACReference(t *testing.T) {
	key, _ := hex.DecodeString("2b7e151628aed2a6abf7158809cf4f3c")
	msg, _ := hex.DecodeString("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411")
	c, _ := aes.NewCipher(key)
	tests := []struct {
		n    int
		want string
	}{
		{0, "bb1d6929e95937287fa37d129b756746"},
		{16, "070a16b46b4d4144f79bdd9dd04a287c"},
		{40, "dfa66747de9ae63030ca32611497c827"},
	}
	for _, tt := range tests {
		if got := hex.EncodeToString(cmac(c, msg[:tt.n])); got != tt.want {
			t.Errorf("CMAC(%d bytes) = %s, want %s", tt.n, got, tt.want)
		}
	}
}
