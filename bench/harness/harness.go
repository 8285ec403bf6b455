// Package harness is what the load programs under bench/ share around
// loadgen: the database flags, a payd started in the program's own process
// on 127.0.0.1:0 over a fresh database, merchants to drive it with, and
// small JSON-over-HTTP helpers. It never targets anything but loopback.
package harness

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Levels parses a comma-separated list of positive integers such as the
// "1,16,64" of a -clients flag; name is the flag, for the error.
func Levels(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s: %q is not a positive integer", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// LoadAvg is the machine's 1, 5 and 15 minute load averages, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// RandomHex is n random bytes in lower-case hex, for tags that keep one
// run's identifiers apart from another's.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// RequireLoopback refuses a target URL that is not plain http on a
// loopback host: the benchmarks load only what runs on this machine.
func RequireLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("%s: scheme %q is not http", raw, u.Scheme)
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
		return nil
	default:
		return fmt.Errorf("%s: host %q is not loopback", raw, h)
	}
}

// Fatal prints err prefixed with the program's name and exits with status 1.
func Fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench/%s: %v\n", filepath.Base(os.Args[0]), err)
	os.Exit(1)
}
