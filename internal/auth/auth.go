// Package auth defines who is calling: a Principal is an API key or a portal
// user, bound to one merchant and one mode. It also holds the hashing of
// secrets (API keys by SHA-256, since they are 256-bit random; passwords by
// argon2id, since people choose them).
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/argon2"
)

// Kinds of principal.
const (
	KindSecret      = "secret"
	KindPublishable = "publishable"
	KindUser        = "user"
)

// Principal is the authenticated caller.
type Principal struct {
	ID         string // key_... or usr_...: the identity four-eyes compares
	MerchantID string
	Livemode   bool
	Kind       string // secret, publishable or user
	Role       string // portal users: admin, approver, viewer
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// Slot is a place for a principal in a context made before the principal
// is known (the API's outer middleware makes it, its key check fills it),
// which spares a request a second context and request copy. Fill it at most
// once, before anything reads the context's principal.
type Slot struct {
	p   Principal
	set bool
}

// WithSlot returns ctx carrying s: From answers s's principal once s is
// filled, and no principal before.
func WithSlot(ctx context.Context, s *Slot) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// SlotFrom returns the slot ctx carries (nil when it carries none, or a
// principal put with WithPrincipal after it).
func SlotFrom(ctx context.Context) *Slot {
	s, _ := ctx.Value(ctxKey{}).(*Slot)
	return s
}

// Fill puts p in the slot.
func (s *Slot) Fill(p Principal) { s.p, s.set = p, true }

// Principal returns the slot's principal and whether it was filled.
func (s *Slot) Principal() (Principal, bool) { return s.p, s.set }

// From returns the principal in ctx.
func From(ctx context.Context) (Principal, bool) {
	switch v := ctx.Value(ctxKey{}).(type) {
	case Principal:
		return v, true
	case *Slot:
		return v.p, v.set
	}
	return Principal{}, false
}

// Must returns the principal in ctx or panics: handlers behind the auth
// middleware always have one.
func Must(ctx context.Context) Principal {
	p, ok := From(ctx)
	if !ok {
		panic("auth: no principal in context")
	}
	return p
}

// KeyPrefix returns the prefix of a key of this kind and mode.
func KeyPrefix(kind string, livemode bool) string {
	p := "sk_"
	if kind == KindPublishable {
		p = "pk_"
	}
	if livemode {
		return p + "live_"
	}
	return p + "test_"
}

// ParseKeyPrefix tells the kind and mode a key claims by its prefix.
func ParseKeyPrefix(key string) (kind string, livemode bool, ok bool) {
	switch {
	case strings.HasPrefix(key, "sk_test_"):
		return KindSecret, false, true
	case strings.HasPrefix(key, "sk_live_"):
		return KindSecret, true, true
	case strings.HasPrefix(key, "pk_test_"):
		return KindPublishable, false, true
	case strings.HasPrefix(key, "pk_live_"):
		return KindPublishable, true, true
	}
	return "", false, false
}

// HashKey is the stored form of an API key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// EqualHash compares two hashes in constant time.
func EqualHash(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// argon2id parameters: 64 MiB, 2 passes, 2 lanes (OWASP's second option).
const (
	argonTime    = 2
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
)

// lowCost makes HashPassword use argon2id's lowest parameters; only a test
// binary can set it (UseLowHashCostForTests).
var lowCost atomic.Bool

// UseLowHashCostForTests makes HashPassword hash with argon2id's lowest cost
// (one pass over 64 KiB, one lane) in this process. Test suites create
// merchants and users by the hundred, and at the real cost (about 0.1 s a
// hash, 0.3 s under the race detector) hashing was most of their time. It
// panics outside a test binary, so payd itself always hashes at full cost.
// Hashes made either way verify alike: VerifyPassword reads the parameters
// from the hash.
func UseLowHashCostForTests() {
	if !testing.Testing() {
		panic("auth: UseLowHashCostForTests outside a test binary")
	}
	lowCost.Store(true)
}

// HashPassword returns an encoded argon2id hash with a random salt.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	t, m, p := uint32(argonTime), uint32(argonMemory), uint8(argonThreads)
	if lowCost.Load() {
		t, m, p = 1, 64, 1
	}
	key := argon2.IDKey([]byte(password), salt, t, m, p, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// ErrBadHash is returned for a stored hash that cannot be parsed.
var ErrBadHash = errors.New("auth: malformed password hash")

// VerifyPassword checks password against an encoded hash in constant time.
func VerifyPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, ErrBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, ErrBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, ErrBadHash
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
