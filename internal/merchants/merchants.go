// Package merchants owns merchants and their principals: API keys (hashed at
// rest), portal users, KYC status, connected live providers and settings.
package merchants

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// Merchant is an account holder: a business taking payments, and optionally
// a participant bank (BIC set).
type Merchant struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	KYCStatus          string    `json:"kyc_status"`
	BIC                string    `json:"bic,omitempty"`
	DeferredSettlement bool      `json:"deferred_settlement"`
	CreatedAt          time.Time `json:"created_at"`
}

// Service manages merchants and principals.
type Service struct {
	db   *store.DB
	box  *secretbox.Box
	keys *auth.KeyCache
}

// NewService makes the service; box seals provider credentials.
func NewService(db *store.DB, box *secretbox.Box) *Service {
	s := &Service{db: db, box: box}
	s.keys = auth.NewKeyCache(s.keyEpoch, auth.KeyCacheOptions{})
	return s
}

// CreateParams describes a new merchant.
type CreateParams struct {
	Name               string
	BIC                string
	DeferredSettlement bool
}

// Created is what merchant creation hands back once: the secrets are not
// stored in clear and cannot be shown again.
type Created struct {
	MerchantID     string      `json:"merchant_id"`
	SecretKeys     []string    `json:"secret_keys"`
	PublishableKey string      `json:"publishable_key"`
	Portal         PortalLogin `json:"portal"`
}

// PortalLogin is a portal user's first credentials; the password is a
// one-time invitation, replaced at the first sign-in.
type PortalLogin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

var bicRE = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)

// Create makes a merchant with two sandbox secret keys (two principals, for
// four-eyes), one sandbox publishable key and a portal admin login whose
// password is a one-time invitation (must_set_password: the admin's first
// sign-in chooses their own).
func (s *Service) Create(ctx context.Context, p CreateParams) (Created, error) {
	var out Created
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = create(ctx, tx, p)
		return err
	})
	return out, err
}

// CreateDemo makes the demo merchant when the database has never had one and
// has no merchant: the decision is recorded (instance_facts 'demo_merchant')
// in the same transaction that counts the merchants, so it is taken once per
// database however many processes start at once. made is false when the
// demo merchant was not made now.
func (s *Service) CreateDemo(ctx context.Context) (c Created, made bool, err error) {
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(ctx, `INSERT INTO instance_facts (name, value, created_at) VALUES ('demo_merchant', '', ?)
			ON CONFLICT (name) DO NOTHING`, store.Micros(tx.Now()))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // decided before, by this process or another
		}
		var merchants int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM merchants`).Scan(&merchants); err != nil {
			return err
		}
		if merchants > 0 {
			return nil // the decision is recorded: a database with merchants never gets a demo
		}
		if c, err = create(ctx, tx, CreateParams{Name: "Demo merchant"}); err != nil {
			return err
		}
		made = true
		_, err = tx.Exec(ctx, `UPDATE instance_facts SET value = ? WHERE name = 'demo_merchant'`, c.MerchantID)
		return err
	})
	if err != nil {
		return Created{}, false, err
	}
	return c, made, nil
}

// create inserts a merchant with its keys and portal admin inside tx.
func create(ctx context.Context, tx *store.Tx, p CreateParams) (Created, error) {
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		return Created{}, errs.Missing("name")
	}
	if p.BIC != "" && !bicRE.MatchString(p.BIC) {
		return Created{}, errs.Invalid("bic", "invalid_bic", "bic %q is not an ISO 9362 BIC", p.BIC)
	}
	if p.DeferredSettlement && p.BIC == "" {
		return Created{}, errs.Invalid("deferred_settlement", "parameter_invalid", "deferred settlement applies to participant banks (--bic)")
	}
	id := ids.New("mer_")
	out := Created{MerchantID: id}
	password := ids.Secret("", 12)
	hash, err := auth.HashPassword(password)
	if err != nil {
		return Created{}, err
	}
	email := fmt.Sprintf("admin+%s@%s.payd.local", strings.ToLower(id[len(id)-8:]), slug(p.Name))
	out.Portal = PortalLogin{Email: email, Password: password}
	var bic any
	if p.BIC != "" {
		bic = p.BIC
	}
	if _, err := tx.Exec(ctx, `INSERT INTO merchants (id, name, kyc_status, bic, deferred_settlement, created_at) VALUES (?, ?, 'pending', ?, ?, ?)`,
		id, p.Name, bic, p.DeferredSettlement, store.Micros(tx.Now())); err != nil {
		if store.IsConflict(err) {
			return Created{}, errs.Conflict("bic_taken", "a participant with BIC %s already exists", p.BIC)
		}
		return Created{}, err
	}
	for i := 0; i < 2; i++ {
		k, _, err := insertKey(ctx, tx, id, false, auth.KindSecret)
		if err != nil {
			return Created{}, err
		}
		out.SecretKeys = append(out.SecretKeys, k)
	}
	k, _, err := insertKey(ctx, tx, id, false, auth.KindPublishable)
	if err != nil {
		return Created{}, err
	}
	out.PublishableKey = k
	// The printed password is a one-time invitation, as an admin's for a
	// user they make: the first sign-in must choose the admin's own.
	_, err = tx.Exec(ctx, `INSERT INTO users (id, merchant_id, email, password_hash, role, must_set_password, created_at) VALUES (?, ?, ?, ?, 'admin', TRUE, ?)`,
		ids.New("usr_"), id, email, hash, store.Micros(tx.Now()))
	return out, err
}

func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
		if b.Len() >= 24 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "merchant"
	}
	return s
}

// Get returns a merchant.
func (s *Service) Get(ctx context.Context, id string) (Merchant, error) {
	return Get(ctx, s.db, id)
}

// Get returns a merchant through any querier (so it can run inside a transaction).
func Get(ctx context.Context, q store.Querier, id string) (Merchant, error) {
	m, err := scanMerchant(q.QueryRow(ctx, `SELECT `+merchantColumns+` FROM merchants WHERE id = ?`, id))
	if store.IsNotFound(err) {
		return m, errs.NotFound("merchant", id)
	}
	return m, err
}

// merchantColumns are the columns scanMerchant reads, in order.
const merchantColumns = `id, name, kyc_status, bic, deferred_settlement, created_at`

// scanMerchant reads one row of merchantColumns.
func scanMerchant(row interface{ Scan(...any) error }) (Merchant, error) {
	var m Merchant
	var bic sql.NullString
	var created int64
	if err := row.Scan(&m.ID, &m.Name, &m.KYCStatus, &bic, &m.DeferredSettlement, &created); err != nil {
		return m, err
	}
	m.BIC = bic.String
	m.CreatedAt = store.FromMicros(created)
	return m, nil
}

// ByBIC finds the participant bank with this BIC.
func ByBIC(ctx context.Context, q store.Querier, bic string) (Merchant, error) {
	var id string
	if err := q.QueryRow(ctx, "SELECT id FROM merchants WHERE bic = ?", bic).Scan(&id); err != nil {
		if store.IsNotFound(err) {
			return Merchant{}, errs.NotFound("participant", bic)
		}
		return Merchant{}, err
	}
	return Get(ctx, q, id)
}

// Count returns how many merchants exist (serve creates a demo one when none).
func (s *Service) Count(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, "SELECT COUNT(*) FROM merchants").Scan(&n)
	return n, err
}

// SetKYC records the operator's KYC decision.
func (s *Service) SetKYC(ctx context.Context, merchantID, status string) error {
	if status != "approved" && status != "rejected" && status != "pending" {
		return errs.Invalid("status", "parameter_invalid", "status must be approved or rejected")
	}
	res, err := s.db.Exec(ctx, "UPDATE merchants SET kyc_status = ? WHERE id = ?", status, merchantID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errs.NotFound("merchant", merchantID)
	}
	return nil
}

// Providers payd knows.
var Providers = []string{"bank_a", "bank_b", "wallet_a", "wallet_b", "wallet_c", "wallet_d"}

// ProviderConfig is a live provider connection.
type ProviderConfig struct {
	BaseURL        string `json:"base_url"`
	APIKey         string `json:"api_key"`
	CallbackSecret string `json:"callback_secret"`
	Timeout        string `json:"timeout,omitempty"`
}

// ConnectProvider stores a live provider's configuration, its secrets sealed.
func (s *Service) ConnectProvider(ctx context.Context, merchantID, provider string, cfg ProviderConfig) error {
	known := false
	for _, p := range Providers {
		known = known || p == provider
	}
	if !known {
		return errs.Invalid("provider", "parameter_invalid", "unknown provider %q", provider)
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return errs.Invalid("base_url", "parameter_invalid", "base_url must be an http(s) URL")
	}
	if cfg.Timeout != "" {
		if _, err := time.ParseDuration(cfg.Timeout); err != nil {
			return errs.Invalid("timeout", "parameter_invalid", "timeout must be a duration such as 10s")
		}
	}
	if _, err := Get(ctx, s.db, merchantID); err != nil {
		return err
	}
	raw, _ := json.Marshal(cfg)
	sealed, err := s.box.Seal(raw, merchantID+"/"+provider)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		now := store.Micros(tx.Now())
		_, err := tx.Exec(ctx, `INSERT INTO provider_connections (merchant_id, provider, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (merchant_id, provider) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at`,
			merchantID, provider, sealed, now, now)
		return err
	})
}

// ProviderConnection returns a live provider's configuration, unsealed,
// read through rd: the store.Work of the request that asks for the
// provider's rail (its unit of work may be open), or the database.
func (s *Service) ProviderConnection(ctx context.Context, rd store.RowQuerier, merchantID, provider string) (ProviderConfig, error) {
	var sealed string
	err := rd.QueryRow(ctx, "SELECT config FROM provider_connections WHERE merchant_id = ? AND provider = ?", merchantID, provider).Scan(&sealed)
	if store.IsNotFound(err) {
		return ProviderConfig{}, errs.NotFound("provider connection", provider)
	}
	if err != nil {
		return ProviderConfig{}, err
	}
	raw, err := s.box.Open(sealed, merchantID+"/"+provider)
	if err != nil {
		return ProviderConfig{}, err
	}
	var cfg ProviderConfig
	err = json.Unmarshal(raw, &cfg)
	return cfg, err
}

// ConnectedProviders lists the providers a merchant has connected for live mode.
func (s *Service) ConnectedProviders(ctx context.Context, merchantID string) ([]string, error) {
	return store.Strings(ctx, s.db, "SELECT provider FROM provider_connections WHERE merchant_id = ? ORDER BY provider", merchantID)
}
