package secretbox

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckValue returns a short public fingerprint of a hex key: the first 8
// bytes of HMAC-SHA256(key, "payd secrets key check"), hex. A database
// records it so that a process started with another key is refused; the key
// cannot be recovered from it.
func CheckValue(hexKey string) (string, error) {
	key, err := hex.DecodeString(strings.TrimSpace(hexKey))
	if err != nil || len(key) != 32 {
		return "", errors.New("secretbox: the secrets key must be 64 hex characters (32 bytes)")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("payd secrets key check"))
	return hex.EncodeToString(mac.Sum(nil)[:8]), nil
}

// ReadKeyFile reads a key file: 64 hex characters, surrounding space
// ignored. A file others may read or write is refused (ReadPrivateFile).
func ReadKeyFile(path string) (string, error) {
	raw, err := ReadPrivateFile(path)
	if err != nil {
		return "", fmt.Errorf("secrets key file: %w", err)
	}
	key := strings.TrimSpace(string(raw))
	if _, err := CheckValue(key); err != nil {
		return "", fmt.Errorf("secrets key file %s: %w", path, err)
	}
	return key, nil
}

// KeyFile returns the key in path, creating the file with a new random key
// (mode 0600) when it does not exist. Creation is atomic: the key is written
// to a temporary file that is then hard-linked to path, so two processes
// starting at once agree on one key and neither reads a half-written file.
func KeyFile(path string) (key string, created bool, err error) {
	if key, err := ReadKeyFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, false, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".payd-key-*")
	if err != nil {
		return "", false, fmt.Errorf("secrets key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod states it for readers.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", false, err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(raw) + "\n"); err != nil {
		tmp.Close()
		return "", false, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", false, err
	}
	if err := tmp.Close(); err != nil {
		return "", false, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			key, err := ReadKeyFile(path)
			return key, false, err
		}
		return "", false, fmt.Errorf("secrets key file: %w", err)
	}
	return hex.EncodeToString(raw), true, nil
}

// ErrFileOpen is the error of a key file others may read or write.
var ErrFileOpen = errors.New("is open to other users")

// ReadPrivateFile reads a file holding key material, refusing it when its
// permission bits give anything to the group or to others (mode & 0o077):
// a key another user can read is no longer a secret, and one another user
// can write can be replaced. The mode is checked on the opened file, so the
// file read is the file checked. The error names the file.
func ReadPrivateFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file %s %w (mode %04o): make it readable by payd's user only (chmod 600 %s)", path, ErrFileOpen, perm, path)
	}
	return io.ReadAll(f)
}
