// Package secretbox encrypts secrets at rest (provider credentials) with
// AES-256-GCM under a key from the environment (PAYD_SECRETS_KEY, 64 hex
// characters). The key never reaches the database or a log line.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// ErrNoKey is returned when no key is configured.
var ErrNoKey = errors.New("secretbox: PAYD_SECRETS_KEY is not set (64 hex characters); it is needed to store provider credentials")

// ErrOpen is returned when a sealed value cannot be decrypted.
var ErrOpen = errors.New("secretbox: cannot decrypt (wrong PAYD_SECRETS_KEY or corrupted value)")

// Box seals and opens values.
type Box struct{ aead cipher.AEAD }

// New makes a Box from a hex-encoded 32-byte key; an empty key gives a Box
// that refuses to seal.
func New(hexKey string) (*Box, error) {
	if hexKey == "" {
		return &Box{}, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(hexKey))
	if err != nil || len(key) != 32 {
		return nil, errors.New("secretbox: PAYD_SECRETS_KEY must be 64 hex characters (32 bytes)")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext; the result is "v1:" + base64(nonce || ciphertext).
// additional binds the value to its row (e.g. merchant and provider).
func (b *Box) Seal(plaintext []byte, additional string) (string, error) {
	if b == nil || b.aead == nil {
		return "", ErrNoKey
	}
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := b.aead.Seal(nonce, nonce, plaintext, []byte(additional))
	return "v1:" + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal.
func (b *Box) Open(sealed, additional string) ([]byte, error) {
	if b == nil || b.aead == nil {
		return nil, ErrNoKey
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	if err != nil || !strings.HasPrefix(sealed, "v1:") || len(raw) < b.aead.NonceSize() {
		return nil, ErrOpen
	}
	n := b.aead.NonceSize()
	pt, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(additional))
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}
