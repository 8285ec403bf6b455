package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// State keeps each simulated device's next transaction counter in a small
// JSON file per terminal under Dir, so consecutive runs advance the KSN as a
// real device does. A lock file guards each terminal's counter against a
// second simulator running at the same moment.
type State struct {
	Dir string
}

// DefaultStateDir is where `payd terminal simulate` keeps its counters:
// PAYD_TERMINAL_STATE_DIR, or payd/terminals under the user cache directory.
func DefaultStateDir(getenv func(string) string) (string, error) {
	if d := getenv("PAYD_TERMINAL_STATE_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the simulator's KSN counters (set PAYD_TERMINAL_STATE_DIR): %w", err)
	}
	return filepath.Join(base, "payd", "terminals"), nil
}

type stateFile struct {
	TerminalID  string `json:"terminal_id"`
	NextCounter uint32 `json:"next_counter"`
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

func (s State) path(terminalID string) (string, error) {
	if !safeID.MatchString(terminalID) {
		return "", fmt.Errorf("simulator: terminal id %q is not a terminal id", terminalID)
	}
	return filepath.Join(s.Dir, terminalID+".json"), nil
}

// Lock takes the terminal's counter for the length of one transaction; call
// the returned function to release it.
func (s State) Lock(terminalID string) (func(), error) {
	p, err := s.path(terminalID)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	lock := p + ".lock"
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		if fi, err := os.Stat(lock); err == nil && time.Since(fi.ModTime()) > 30*time.Second {
			os.Remove(lock) // left by a simulator that died
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("simulator: another simulator holds %s", lock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Next returns the terminal's next counter: 1 for a device never used here.
func (s State) Next(terminalID string) (uint32, error) {
	p, err := s.path(terminalID)
	if err != nil {
		return 0, err
	}
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	var f stateFile
	if err := json.Unmarshal(raw, &f); err != nil || f.NextCounter == 0 {
		return 0, fmt.Errorf("simulator: %s is not a counter file; remove it or pass --ksn-counter", p)
	}
	return f.NextCounter, nil
}

// Save records the terminal's next counter (written to a temporary file and
// renamed, so a crash never leaves half a file).
func (s State) Save(terminalID string, next uint32) error {
	p, err := s.path(terminalID)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(stateFile{TerminalID: terminalID, NextCounter: next})
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
