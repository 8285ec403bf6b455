package terminals

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/terminals/dukpt"
)

// The sandbox base derivation keys: the public ANSI test keys, which anyone
// can read in the standards' examples. They protect nothing and are used only
// for test-mode terminals and by `payd terminal simulate`.
const (
	// SandboxBDKTDES is the TDES test BDK of ANSI X9.24-1:2009 Annex A.
	SandboxBDKTDES = "0123456789ABCDEFFEDCBA9876543210"
	// SandboxBDKAES128 is the AES-128 test BDK of the X9.24-3-2017 test vectors.
	SandboxBDKAES128 = "FEDCBA9876543210F1F1F1F1F1F1F1F1"
)

// SandboxBDK returns the public test BDK of a model.
func SandboxBDK(m Model) (dukpt.Key, error) {
	switch m {
	case Countertop:
		return dukpt.ParseKey(SandboxBDKTDES)
	case Mobile:
		return dukpt.ParseKey(SandboxBDKAES128)
	}
	return dukpt.Key{}, fmt.Errorf("terminals: unknown model %q", m)
}

// Keys holds the base derivation keys: the public test keys for test mode and
// the keys of the PAYD_P2PE_KEYS file for live mode. It never prints, logs or
// stores a key; a key file that cannot be read is reported without its content.
type Keys struct {
	sandbox map[Model]dukpt.Key

	mu   sync.RWMutex
	live map[Model]dukpt.Key
	path string
}

// ErrKeyFile reports a live key file that cannot be used. Its messages name
// the file and the model at fault, never a key's bytes.
var ErrKeyFile = errors.New("P2PE key file")

// NewKeys loads the live keys from path (none when path is empty) and the
// sandbox keys from the constants above.
func NewKeys(path string) (*Keys, error) {
	k := &Keys{sandbox: map[Model]dukpt.Key{}, path: path}
	for _, m := range Models {
		key, err := SandboxBDK(m)
		if err != nil {
			return nil, err
		}
		k.sandbox[m] = key
	}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload reads the key file again (on SIGHUP). On failure the keys in use are kept.
func (k *Keys) Reload() error {
	if k.path == "" {
		return nil
	}
	live, err := readKeyFile(k.path)
	if err != nil {
		return err
	}
	for m, key := range live {
		if key.Equal(k.sandbox[m]) {
			return fmt.Errorf("%w %s: the %s key is the public ANSI test key, which must never protect live card data", ErrKeyFile, k.path, m)
		}
	}
	k.mu.Lock()
	k.live = live
	k.mu.Unlock()
	return nil
}

// LiveModels reports which models have a live key.
func (k *Keys) LiveModels() []Model {
	k.mu.RLock()
	defer k.mu.RUnlock()
	var out []Model
	for _, m := range Models {
		if _, ok := k.live[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// BDK returns the base derivation key for a model in a mode. A live model
// without a key is 503 p2pe_keys_unavailable: the payment cannot be decrypted
// here, and nothing is written.
func (k *Keys) BDK(livemode bool, m Model) (dukpt.Key, error) {
	if !livemode {
		if key, ok := k.sandbox[m]; ok {
			return key, nil
		}
	} else {
		k.mu.RLock()
		key, ok := k.live[m]
		k.mu.RUnlock()
		if ok {
			return key, nil
		}
	}
	return dukpt.Key{}, &errs.Error{Kind: errs.KindUnavailable, Code: "p2pe_keys_unavailable",
		Message: fmt.Sprintf("no base derivation key is configured for %s terminals in live mode (PAYD_P2PE_KEYS); the payment was not processed", m)}
}

// readKeyFile parses the live key file: a JSON object mapping each model to
// its BDK in hex, e.g. {"countertop":"<32 hex digits>","mobile":"<32 hex digits>"}.
// Either model may be left out.
func readKeyFile(path string) (map[Model]dukpt.Key, error) {
	raw, err := secretbox.ReadPrivateFile(path)
	if errors.Is(err, secretbox.ErrFileOpen) {
		return nil, fmt.Errorf("%w %s: %w", ErrKeyFile, path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: cannot read it: %w", ErrKeyFile, path, unwrapPathError(err))
	}
	var doc map[string]string
	if err := json.Unmarshal(raw, &doc); err != nil {
		// The decoder's message can quote the file's bytes: say only where.
		return nil, fmt.Errorf("%w %s: not a JSON object of model names to hex keys", ErrKeyFile, path)
	}
	clear(raw)
	out := map[Model]dukpt.Key{}
	for name, hexKey := range doc {
		m := Model(name)
		if _, ok := m.Algorithm(); !ok {
			return nil, fmt.Errorf("%w %s: unknown model %q (want %s or %s)", ErrKeyFile, path, printableName(name), Countertop, Mobile)
		}
		key, err := dukpt.ParseKey(hexKey)
		if err != nil {
			return nil, fmt.Errorf("%w %s: the %s key is not 32 hex digits (16 bytes)", ErrKeyFile, path, m)
		}
		out[m] = key
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s: no key in it", ErrKeyFile, path)
	}
	return out, nil
}

// printableName shortens a model name from the key file for an error message.
func printableName(s string) string {
	if len(s) > 20 || !printable(s) {
		return "…"
	}
	return s
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
