package dukpt

import "errors"

// Errors returned by this package; callers test for them with errors.Is. Their
// messages name lengths and counters, never key material.
var (
	// ErrInvalidKSN reports a key serial number of the wrong length, not hex, or
	// with a counter no originating device can produce for the operation.
	ErrInvalidKSN = errors.New("dukpt: invalid KSN")
	// ErrInvalidKey reports key material that is missing or not 16 bytes.
	ErrInvalidKey = errors.New("dukpt: invalid key")
	// ErrCiphertextLength reports ciphertext that is empty or not a multiple of the cipher block size.
	ErrCiphertextLength = errors.New("dukpt: ciphertext length is not a positive multiple of the block size")
	// ErrEmptyPlaintext reports an attempt to encrypt nothing.
	ErrEmptyPlaintext = errors.New("dukpt: empty plaintext")
	// ErrUnsupportedAlgorithm reports an Algorithm value other than TDES or AES128.
	ErrUnsupportedAlgorithm = errors.New("dukpt: unsupported algorithm")
	// ErrUnsupportedKeyUsage reports a KeyUsage value this package does not derive.
	ErrUnsupportedKeyUsage = errors.New("dukpt: unsupported key usage")
	// ErrDeviceExhausted reports a device whose transaction counter has run out.
	ErrDeviceExhausted = errors.New("dukpt: device transaction counter exhausted")
)
