package secretbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// DeriveKey returns a 32-byte key for one purpose (such as "hosted invoice
// link"), derived from the secrets key with HMAC-SHA256 under a label that
// names the purpose. Each purpose gets its own key, none of them is the
// sealing key or its text, and none reveals the sealing key. An empty
// secrets key derives no key (nil): a caller must then refuse what the key
// would have protected, never use an empty one.
func DeriveKey(hexKey, purpose string) ([]byte, error) {
	if hexKey == "" {
		return nil, nil
	}
	if purpose == "" {
		return nil, errors.New("secretbox: a derived key needs a purpose")
	}
	key, err := hex.DecodeString(strings.TrimSpace(hexKey))
	if err != nil || len(key) != 32 {
		return nil, errors.New("secretbox: the secrets key must be 64 hex characters (32 bytes)")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("payd derived key\x00"))
	mac.Write([]byte(purpose))
	return mac.Sum(nil), nil
}
