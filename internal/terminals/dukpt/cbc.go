package dukpt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"fmt"
)

// blockCipher returns the algorithm's block cipher under a 16-byte key.
func blockCipher(alg Algorithm, key [KeySize]byte) cipher.Block {
	var (
		b   cipher.Block
		err error
	)
	if alg == TDES {
		var k3 [24]byte
		copy(k3[:16], key[:])
		copy(k3[16:], key[:8])
		b, err = des.NewTripleDESCipher(k3[:])
	} else {
		b, err = aes.NewCipher(key[:])
	}
	if err != nil {
		panic(err) // unreachable: the key length is fixed
	}
	return b
}

// encryptCBC zero-pads the plaintext to the block size and encrypts it CBC with a zero IV.
func encryptCBC(alg Algorithm, key [KeySize]byte, plaintext []byte) []byte {
	bs := alg.BlockSize()
	out := make([]byte, (len(plaintext)+bs-1)/bs*bs)
	copy(out, plaintext)
	iv := make([]byte, bs)
	cipher.NewCBCEncrypter(blockCipher(alg, key), iv).CryptBlocks(out, out)
	return out
}

// decryptCBC decrypts whole blocks CBC with a zero IV; checkCiphertext must pass first.
func decryptCBC(alg Algorithm, key [KeySize]byte, ciphertext []byte) []byte {
	out := make([]byte, len(ciphertext))
	iv := make([]byte, alg.BlockSize())
	cipher.NewCBCDecrypter(blockCipher(alg, key), iv).CryptBlocks(out, ciphertext)
	return out
}

// checkCiphertext requires a positive multiple of the algorithm's block size.
func checkCiphertext(alg Algorithm, ciphertext []byte) error {
	if !alg.valid() {
		return fmt.Errorf("%w: zero KSN", ErrInvalidKSN)
	}
	bs := alg.BlockSize()
	if len(ciphertext) == 0 || len(ciphertext)%bs != 0 {
		return fmt.Errorf("%w: %d bytes, block size %d", ErrCiphertextLength, len(ciphertext), bs)
	}
	return nil
}
