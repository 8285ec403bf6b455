package portal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// Login throttling: counters kept in the database (so every payd process sees
// the same ones), one row per bucket. An attempt reserves a failure slot in
// every bucket it belongs to with a compare-and-set BEFORE the password is
// hashed, so a hundred concurrent guesses cannot all pass a check made before
// any of them failed; an attempt that turns out right gives its slot back.
//
// The buckets, and why each exists:
//   - per address (ip:): one address guessing many accounts;
//   - per email and address (pair:): one address guessing one account; this
//     is the bucket that normally stops an attacker, and it stops only them;
//   - per email (email:): many addresses guessing one account. Its window is
//     short, so an attacker elsewhere can lock the real user out for a minute
//     at most, and a single address can never fill it (its pair bucket is
//     smaller).
const (
	throttleWindow      = 15 * time.Minute
	maxFailuresPerIP    = 20
	maxFailuresPerPair  = 5
	emailWindow         = time.Minute
	maxFailuresPerEmail = 10
)

// Second-factor guard: wrong codes are counted per account, across sessions
// and addresses, and no correct password resets them. After mfaMaxFailures
// wrong codes the account's second factor is locked for mfaLock: no code, not
// even the right one, is checked meanwhile.
const (
	mfaMaxFailures = 10
	mfaLock        = 15 * time.Minute
)

// throttleBucket is one counter an attempt takes a slot in.
type throttleBucket struct {
	name   string
	max    int
	window time.Duration
}

func ipBucket(ip string) throttleBucket {
	return throttleBucket{"ip:" + ip, maxFailuresPerIP, throttleWindow}
}

// loginBuckets are the counters a password attempt takes a slot in.
func loginBuckets(email, ip string) []throttleBucket {
	h := emailHash(email)
	return []throttleBucket{ipBucket(ip),
		{"pair:" + h + ":" + ip, maxFailuresPerPair, throttleWindow},
		{"email:" + h, maxFailuresPerEmail, emailWindow}}
}

// emailHash is what the throttle stores instead of the email typed (people
// type passwords into the email field). It hashes the normalised email, so
// a full-width or differently cased form of an address shares its counters.
func emailHash(email string) string {
	if n, err := merchants.NormalizeEmail(email); err == nil {
		email = n
	}
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

// reserve takes one failure slot in each bucket. When a bucket is full it
// gives back the slots already taken and returns how long to wait.
func (p *Portal) reserve(ctx context.Context, buckets []throttleBucket) (time.Duration, error) {
	now := p.now()
	for i, b := range buckets {
		wait, err := p.reserveOne(ctx, b, now)
		if err != nil || wait > 0 {
			p.release(ctx, buckets[:i])
			return wait, err
		}
	}
	return 0, nil
}

// reserveOne is the compare-and-set on one bucket: a window that has ended
// starts again at one; otherwise the count grows only while under the limit.
// (Both engines evaluate every SET expression on the row as it was.)
func (p *Portal) reserveOne(ctx context.Context, b throttleBucket, now time.Time) (time.Duration, error) {
	db := p.cfg.DB
	if _, err := db.Exec(ctx, "INSERT INTO portal_throttle (bucket, failures, window_start) VALUES (?, 0, ?) ON CONFLICT (bucket) DO NOTHING",
		b.name, store.Micros(now)); err != nil {
		return 0, err
	}
	expired := store.Micros(now.Add(-b.window))
	res, err := db.Exec(ctx, `UPDATE portal_throttle SET
		failures = CASE WHEN window_start <= ? THEN 1 ELSE failures + 1 END,
		window_start = CASE WHEN window_start <= ? THEN ? ELSE window_start END
		WHERE bucket = ? AND (window_start <= ? OR failures < ?)`,
		expired, expired, store.Micros(now), b.name, expired, b.max)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return 0, nil
	}
	var start int64
	if err := db.QueryRow(ctx, "SELECT window_start FROM portal_throttle WHERE bucket = ?", b.name).Scan(&start); err != nil {
		return 0, err
	}
	return max(store.FromMicros(start).Add(b.window).Sub(now), time.Second), nil
}

// release gives back slots reserved for attempts that did not fail.
func (p *Portal) release(ctx context.Context, buckets []throttleBucket) {
	for _, b := range buckets {
		if _, err := p.cfg.DB.Exec(context.WithoutCancel(ctx), "UPDATE portal_throttle SET failures = failures - 1 WHERE bucket = ? AND failures > 0", b.name); err != nil {
			p.cfg.Logger.Error("portal throttle release", "err", err)
		}
	}
}

// passwordAccepted settles a right password's reservation: the address's
// slot is given back (its earlier failures stay counted), the email's own
// buckets start again. Second-factor failures are not touched.
func (p *Portal) passwordAccepted(ctx context.Context, email, ip string) error {
	bs := loginBuckets(email, ip)
	p.release(ctx, bs[:1])
	_, err := p.cfg.DB.Exec(ctx, "DELETE FROM portal_throttle WHERE bucket IN (?, ?)", bs[1].name, bs[2].name)
	return err
}

// reserveCode takes one of the account's second-factor attempts. It returns
// the end of the lock when the account is locked (or all its attempts are
// being checked right now), the zero time when the code may be checked.
func (p *Portal) reserveCode(ctx context.Context, userID string) (time.Time, error) {
	now := p.now()
	db := p.cfg.DB
	if _, err := db.Exec(ctx, "INSERT INTO portal_mfa_guard (user_id, failures, locked_until) VALUES (?, 0, 0) ON CONFLICT (user_id) DO NOTHING", userID); err != nil {
		return time.Time{}, err
	}
	res, err := db.Exec(ctx, "UPDATE portal_mfa_guard SET failures = failures + 1 WHERE user_id = ? AND locked_until <= ? AND failures < ?",
		userID, store.Micros(now), mfaMaxFailures)
	if err != nil {
		return time.Time{}, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return time.Time{}, nil
	}
	var until int64
	if err := db.QueryRow(ctx, "SELECT locked_until FROM portal_mfa_guard WHERE user_id = ?", userID).Scan(&until); err != nil {
		return time.Time{}, err
	}
	if t := store.FromMicros(until); t.After(now) {
		return t, nil
	}
	return now.Add(time.Second), nil
}

// codeAccepted forgets the account's wrong codes after a right one.
func (p *Portal) codeAccepted(ctx context.Context, userID string) error {
	_, err := p.cfg.DB.Exec(ctx, "UPDATE portal_mfa_guard SET failures = 0 WHERE user_id = ?", userID)
	return err
}

// codeRefused keeps the wrong code counted and, when it was the last one
// allowed, locks the second factor; it reports whether this call locked it
// (exactly one of racing calls does).
func (p *Portal) codeRefused(ctx context.Context, userID string) (bool, error) {
	now := p.now()
	res, err := p.cfg.DB.Exec(ctx, "UPDATE portal_mfa_guard SET failures = 0, locked_until = ? WHERE user_id = ? AND failures >= ? AND locked_until <= ?",
		store.Micros(now.Add(mfaLock)), userID, mfaMaxFailures, store.Micros(now))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// codeOutcome is what a guarded second-factor code came to.
type codeOutcome int

const (
	codeRight     codeOutcome = iota // checked and right
	codeWrong                        // checked and wrong; attempts remain
	codeLockedNow                    // checked, wrong, and the last attempt allowed: the account is now locked
	codeLocked                       // not checked: the account's second factor is locked (wait until the lock ends)
	codeThrottled                    // not checked: the address has used its budget (wait)
)

// guardCode runs check, which verifies a code typed by userID, under the
// sign-in's limits: the address's budget and the account's second-factor
// attempts (portal_mfa_guard) are reserved before the code is checked, a
// right code gives them back, a wrong one stays counted, and the last wrong
// one allowed locks the second factor for mfaLock. Every form that checks a
// code goes through here (sign-in's verify step, TOTP enrolment and
// removal), so no form is a way around the lock. wait is how long a refused
// caller must wait.
func (p *Portal) guardCode(ctx context.Context, userID, ip string, check func() (bool, error)) (out codeOutcome, wait time.Duration, err error) {
	if wait, err := p.reserve(ctx, []throttleBucket{ipBucket(ip)}); err != nil || wait > 0 {
		return codeThrottled, wait, err
	}
	if until, err := p.reserveCode(ctx, userID); err != nil || !until.IsZero() {
		p.release(ctx, []throttleBucket{ipBucket(ip)})
		return codeLocked, until.Sub(p.now()), err
	}
	ok, err := check()
	if err != nil {
		return codeWrong, 0, err
	}
	if ok {
		p.release(ctx, []throttleBucket{ipBucket(ip)})
		return codeRight, 0, p.codeAccepted(ctx, userID)
	}
	locked, err := p.codeRefused(ctx, userID)
	if locked {
		return codeLockedNow, mfaLock, err
	}
	return codeWrong, 0, err
}
