package portal

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Session lifetimes. A session ends after sessionIdle without a request or
// sessionMax after login, whichever comes first; the half-way state between
// a correct password and a correct TOTP code lasts mfaMax.
const (
	sessionCookie = "payd_session"
	sessionIdle   = 30 * time.Minute
	sessionMax    = 12 * time.Hour
	mfaMax        = 5 * time.Minute
	// touchEvery bounds how often a request writes last_seen_at, so reading
	// pages does not turn into one write per request.
	touchEvery = time.Minute
	// maxMFAFailures wrong codes end the half-way session.
	maxMFAFailures = 5
)

// Session stages: a password alone gives an mfa session (only the verify
// page), a password and (when enrolled) a TOTP code give a full one.
const (
	stageMFA  = "mfa"
	stageFull = "full"
)

// session is a signed-in portal user, as loaded for one request.
type session struct {
	hash       string // the stored id: SHA-256 of the cookie token
	token      string // the cookie token itself (never stored)
	UserID     string
	MerchantID string
	Email      string
	Role       string
	Stage      string
	// MustSetPassword: the user still has the invitation password an admin
	// gave; the session opens only the set-password form until it changes.
	MustSetPassword bool
	failures        int
	lastSeen        time.Time
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newSession stores a session for user and returns its cookie token. A fresh
// random token is made every time, so a session id planted before login is
// never the one that is authenticated (no fixation).
func (p *Portal) newSession(ctx context.Context, userID, merchantID, stage string, r *http.Request) (string, error) {
	token := ids.Secret("", 32)
	now := p.cfg.DB.Now()
	life := sessionMax
	if stage == stageMFA {
		life = mfaMax
	}
	ua := r.UserAgent()
	if len(ua) > 200 {
		ua = ua[:200]
	}
	_, err := p.cfg.DB.Exec(ctx, `INSERT INTO portal_sessions (id, user_id, merchant_id, stage, ip, user_agent, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, hashToken(token), userID, merchantID, stage, clientIP(r), ua,
		store.Micros(now), store.Micros(now), store.Micros(now.Add(life)))
	return token, err
}

// loadSession returns the request's live session, or nil. Expired sessions
// and those of disabled users are deleted and count as none.
func (p *Portal) loadSession(ctx context.Context, r *http.Request) (*session, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || len(ck.Value) < 20 || len(ck.Value) > 100 {
		return nil, nil
	}
	s := &session{token: ck.Value, hash: hashToken(ck.Value)}
	var lastSeen, expires int64
	var disabled sql.NullInt64
	err = p.cfg.DB.QueryRow(ctx, `SELECT s.user_id, s.merchant_id, s.stage, s.mfa_failures, s.last_seen_at, s.expires_at, u.email, u.role, u.disabled_at, u.must_set_password
		FROM portal_sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?`, s.hash).
		Scan(&s.UserID, &s.MerchantID, &s.Stage, &s.failures, &lastSeen, &expires, &s.Email, &s.Role, &disabled, &s.MustSetPassword)
	if store.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := p.cfg.DB.Now()
	s.lastSeen = store.FromMicros(lastSeen)
	if disabled.Valid || now.After(store.FromMicros(expires)) || (s.Stage == stageFull && now.Sub(s.lastSeen) > sessionIdle) {
		p.deleteSession(ctx, s.hash)
		return nil, nil
	}
	if now.Sub(s.lastSeen) > touchEvery {
		if _, err := p.cfg.DB.Exec(ctx, "UPDATE portal_sessions SET last_seen_at = ? WHERE id = ?", store.Micros(now), s.hash); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *Portal) deleteSession(ctx context.Context, hash string) error {
	_, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_sessions WHERE id = ?", hash)
	return err
}

// setSessionCookie hands the browser its session token: HttpOnly (scripts
// cannot read it), SameSite=Strict (no other site's page can send it), and
// Secure when the portal is reached over TLS.
func (p *Portal) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/portal", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: p.secure(r)})
}

func (p *Portal) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/portal", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: p.secure(r)})
}

// secure tells whether cookies must be marked Secure: the request came over
// TLS, or payd's public URL is https (TLS ended at a proxy in front).
func (p *Portal) secure(r *http.Request) bool {
	return r.TLS != nil || p.httpsPublic
}

// purgeSessions deletes expired sessions and old login failures (the
// periodic portal_cleanup job).
func (p *Portal) purgeSessions(ctx context.Context) error {
	now := p.cfg.DB.Now()
	if _, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_sessions WHERE expires_at < ? OR last_seen_at < ?",
		store.Micros(now), store.Micros(now.Add(-sessionIdle))); err != nil {
		return err
	}
	_, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_throttle WHERE window_start < ?", store.Micros(now.Add(-24*time.Hour)))
	return err
}
