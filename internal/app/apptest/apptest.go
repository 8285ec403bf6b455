// Package apptest starts a real payd (app.Main on port 0) on each engine
// and gives end-to-end tests a client whose every response is checked
// against api/openapi.yaml, so the document stays true.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/testutil"
)

// Env is a running payd with one merchant.
type Env struct {
	T        testing.TB
	Engine   storetest.Engine
	Main     *app.Main
	URL      string
	Merchant merchants.Created
	// SK and SK2 are the merchant's two test secret keys (two principals);
	// PK its publishable key.
	SK, SK2, PK string
	Logs        *SyncBuffer
	Client      *http.Client
	spec        *specChecker
}

// Option adjusts the configuration before start.
type Option func(*app.Config)

// ForEachEngine runs fn against a fresh payd on SQLite and on PostgreSQL.
func ForEachEngine(t *testing.T, fn func(t *testing.T, e *Env), opts ...Option) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			fn(t, Start(t, eng, opts...))
		})
	}
}

// BaseConfig is payd's configuration from an empty environment on a loopback
// port over a fresh, migrated database of engine, with the rate limits off
// and a fixed secrets key: what Start runs with before its sandbox timings,
// and what a benchmark of the whole API starts from.
func BaseConfig(t testing.TB, engine storetest.Engine) app.Config {
	t.Helper()
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.PublicURL = "http://127.0.0.1:0"
	cfg.DatabaseURL = storetest.MigratedURL(t, engine)
	cfg.RateLimit = 0
	cfg.PublicRateLimit = 0
	cfg.SecretsKey = strings.Repeat("5a", 32)
	return cfg
}

// Start runs payd on engine with a fresh database and one merchant.
func Start(t testing.TB, engine storetest.Engine, opts ...Option) *Env {
	t.Helper()
	cfg := BaseConfig(t, engine)
	cfg.SandboxTimeoutDelay = 50 * time.Millisecond
	cfg.SandboxPushDelay = 100 * time.Millisecond
	cfg.WebhookRetrySchedule = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.PublicURL == "http://127.0.0.1:0" {
		cfg.PublicURL = "http://" + cfg.Addr
	}
	logs := &SyncBuffer{}
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(logs, "debug")}
	ctx := context.Background()
	if err := m.Run(ctx); err != nil {
		t.Fatalf("start payd on %s: %v", engine, err)
	}
	t.Cleanup(func() { m.Close() })
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Test merchant"})
	if err != nil {
		t.Fatal(err)
	}
	acceptInvitation(t, m, &c)
	e := &Env{T: t, Engine: engine, Main: m, URL: m.URL(), Merchant: c, SK: c.SecretKeys[0], SK2: c.SecretKeys[1], PK: c.PublishableKey,
		Logs: logs, Client: &http.Client{Timeout: 60 * time.Second}}
	e.spec = loadSpec(t, e.URL)
	return e
}

// NewMerchant makes another merchant as `payd merchant create` does, its
// admin's password already their own (see acceptInvitation).
func (e *Env) NewMerchant(p merchants.CreateParams) merchants.Created {
	e.T.Helper()
	c, err := e.Main.Merchants.Create(context.Background(), p)
	if err != nil {
		e.T.Fatal(err)
	}
	acceptInvitation(e.T, e.Main, &c)
	return c
}

// acceptInvitation replaces a new merchant's admin password, a one-time
// invitation, as the admin does at first sign-in, so tests sign in with
// c.Portal.Password straight away. (TestFirstAdminIsInvited drives the
// invitation itself.)
func acceptInvitation(t testing.TB, m *app.Main, c *merchants.Created) {
	t.Helper()
	ctx := context.Background()
	var admin string
	if err := m.DB.QueryRow(ctx, "SELECT id FROM users WHERE merchant_id = ?", c.MerchantID).Scan(&admin); err != nil {
		t.Fatal(err)
	}
	own := "own-" + c.Portal.Password
	if err := m.Merchants.SetOwnPassword(ctx, admin, own, ""); err != nil {
		t.Fatal(err)
	}
	c.Portal.Password = own
}

// SyncBuffer is a goroutine-safe log sink tests can search.
type SyncBuffer = testutil.SyncBuffer

// Response is a completed request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// ErrorCode returns error.code of an error body ("" if none).
func (r *Response) ErrorCode() string {
	var b struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(r.Body, &b)
	return b.Error.Code
}

// Request is a request to make.
type Request struct {
	Method  string
	Path    string
	Key     string // bearer key; "" sends none
	Body    any    // marshalled as JSON unless []byte or string
	Headers map[string]string
}

// Do sends req and checks the response against the OpenAPI document.
func (e *Env) Do(req Request) *Response {
	e.T.Helper()
	var body io.Reader
	var raw []byte
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.T.Fatal(err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, e.URL+req.Path, body)
	if err != nil {
		e.T.Fatal(err)
	}
	if raw != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Key)
	}
	for k, v := range req.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := e.Client.Do(hr)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	if resp.Header.Get("Request-Id") == "" {
		e.T.Errorf("%s %s: no Request-Id header", req.Method, req.Path)
	}
	e.spec.check(e.T, req.Method, req.Path, hr.Header, raw, r)
	return r
}

// Get is Do for a GET with the main secret key.
func (e *Env) Get(path string) *Response {
	e.T.Helper()
	return e.Do(Request{Method: "GET", Path: path, Key: e.SK})
}

// Post is Do for a POST with the main secret key and a fresh idempotency key.
func (e *Env) Post(path string, body any) *Response {
	e.T.Helper()
	return e.Do(Request{Method: "POST", Path: path, Key: e.SK, Body: body, Headers: map[string]string{"Idempotency-Key": newKey()}})
}

var keyN struct {
	sync.Mutex
	n int
}

func newKey() string {
	keyN.Lock()
	defer keyN.Unlock()
	keyN.n++
	return "test-" + time.Now().Format("150405.000000") + "-" + itoa(keyN.n)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// SpecPath is the OpenAPI document's path.
func SpecPath(t testing.TB) string {
	return filepath.Join(testutil.RepoRoot(t), "api", "openapi.yaml")
}

// RequireSecretsAbsent fails if any of secrets occurs in the logs.
func (e *Env) RequireSecretsAbsent(secrets ...string) {
	e.T.Helper()
	logs := e.Logs.String()
	for _, s := range secrets {
		if at := secretAt(logs, s); at >= 0 {
			e.T.Errorf("a secret (%.10s…) appears in the logs at byte %d: …%s…", s, at,
				strings.ReplaceAll(logs[max(at-60, 0):at], "\n", " ")+"[secret]")
		}
	}
}

// secretAt is where s appears in logs, or -1. A secret made of digits alone
// (a PIN, a code) counts only where it is not part of a longer run of digits:
// a log line's timestamp or duration may hold any six digits in a row.
func secretAt(logs, s string) int {
	if s == "" {
		return -1
	}
	if strings.Trim(s, "0123456789") != "" {
		return strings.Index(logs, s)
	}
	digit := func(i int) bool { return i >= 0 && i < len(logs) && logs[i] >= '0' && logs[i] <= '9' }
	for off := 0; ; {
		i := strings.Index(logs[off:], s)
		if i < 0 {
			return -1
		}
		at := off + i
		if !digit(at-1) && !digit(at+len(s)) {
			return at
		}
		off = at + 1
	}
}

// Getenv is os.Getenv; here so tests can tell CI from a newcomer's machine.
var Getenv = os.Getenv

// WithAllSanctionsLists configures the OFAC, UN and EU sample lists of
// testdata together, as PAYD_SANCTIONS_LIST names several files.
func WithAllSanctionsLists(t testing.TB) Option {
	lists := strings.Join([]string{
		testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv"),
		testutil.TestData(t, "sanctions", "un_sample", "consolidated.xml"),
		testutil.TestData(t, "sanctions", "eu_sample", "eu_fsf.xml"),
	}, ",")
	return func(c *app.Config) { c.SanctionsList = lists }
}
