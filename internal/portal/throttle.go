package portal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/payd/payd/internal/store"
)

// Login throttling: a sliding window over failed attempts (wrong password,
// unknown email, wrong TOTP code), kept in the database so every payd process
// sees the same count. While an email or an IP address is over its limit,
// login answers 429 without checking the password (so no argon2 work is
// spent on a guessing attack either).
const (
	throttleWindow      = 15 * time.Minute
	maxFailuresPerEmail = 5
	maxFailuresPerIP    = 20
)

// emailHash is what the failure table stores instead of the email typed
// (people type passwords into the email field).
func emailHash(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:])
}

// clientIP is the connection's address. X-Forwarded-For is not trusted: a
// client could forge it to dodge the per-IP limit.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// throttled reports how long a login must wait (0 when it may proceed).
func (p *Portal) throttled(ctx context.Context, email, ip string) (time.Duration, error) {
	now := p.cfg.DB.Now()
	var wait time.Duration
	for _, c := range []struct {
		col, val string
		max      int
	}{{"email_hash", emailHash(email), maxFailuresPerEmail}, {"ip", ip, maxFailuresPerIP}} {
		// The max-th most recent failure: while it is inside the window the
		// limit is reached, until it leaves the window.
		var at int64
		err := p.cfg.DB.QueryRow(ctx, "SELECT created_at FROM portal_login_failures WHERE "+c.col+" = ? AND created_at > ? ORDER BY created_at DESC LIMIT 1 OFFSET ?",
			c.val, store.Micros(now.Add(-throttleWindow)), c.max-1).Scan(&at)
		if store.IsNotFound(err) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if d := store.FromMicros(at).Add(throttleWindow).Sub(now); d > wait {
			wait = d
		}
	}
	return wait, nil
}

// recordFailure counts one failed attempt for the email and the address.
func (p *Portal) recordFailure(ctx context.Context, email, ip string) error {
	_, err := p.cfg.DB.Exec(ctx, "INSERT INTO portal_login_failures (email_hash, ip, created_at) VALUES (?, ?, ?)",
		emailHash(email), ip, store.Micros(p.cfg.DB.Now()))
	return err
}

// clearFailures forgets an email's failures after a successful login (the
// per-IP count stays: one address guessing many accounts is still limited).
func (p *Portal) clearFailures(ctx context.Context, email string) error {
	_, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_login_failures WHERE email_hash = ?", emailHash(email))
	return err
}
