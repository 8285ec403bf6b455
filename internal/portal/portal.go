// Package portal is the merchant portal served by `payd serve` under
// /portal: server-rendered pages (html/template, templates and assets
// embedded, no external requests) over the capabilities' services. Every
// action is a POST form carrying a CSRF token, so a browser without
// JavaScript or a script can drive it; the few scripts only refresh progress.
//
// A portal user is a principal (usr_...) like an API key: the portal calls
// the capabilities' services with an auth.Principal of kind user, so
// four-eyes and every other rule hold exactly as in the API. The mode is in
// the path (/portal/test/..., /portal/live/...) and every query is scoped by
// the signed-in user's merchant and that mode.
package portal

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/banking"
	"github.com/payd/payd/internal/billing"
	"github.com/payd/payd/internal/disputes"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/refunds"
	"github.com/payd/payd/internal/requestlog"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/webhooks"
)

// Config is what the portal needs from the process.
type Config struct {
	DB        *store.DB
	Merchants *merchants.Service
	// SanctionsReady says whether a sanctions list is loaded (the go-live
	// checklist shows it); nil leaves the step out.
	SanctionsReady func() bool
	// Box seals TOTP secrets (PAYD_SECRETS_KEY); without a key, two-factor
	// enrolment is unavailable and says why.
	Box       *secretbox.Box
	Logger    *slog.Logger
	PublicURL string
	// Uploads bounds large uploads in flight per user, per merchant and in
	// total; the app shares the API's. Nil: a fresh default one.
	Uploads *httpx.UploadSlots
}

// Portal serves the merchant portal.
type Portal struct {
	cfg         Config
	pages       *pageSet
	httpsPublic bool
	// hashing bounds concurrent password verifications: each argon2id run
	// takes 64 MiB, and a burst of logins must not exhaust memory.
	hashing chan struct{}
	// uploads bounds the large form uploads (payout batch CSVs) each user
	// has in flight, as the API bounds each key's.
	uploads *httpx.UploadSlots
	// inFlight holds the form keys whose submission runs now (once.go).
	inFlight idempotency.Flights
	caps     []capability
	volume   volumeSource
	daily    dailySource

	// The capabilities' services, looked up per request (each is wired by
	// its own wirer, some after the portal's).
	payments  func() *payments.Service
	banking   func() *banking.Service
	terminals func() *terminals.Service
	webhooks  func() *webhooks.Service
	payouts   func() *payouts.Service
	refunds   func() *refunds.Service
	disputes  func() *disputes.Service
	billing   func() *billing.Service

	complianceOn bool
	// heldPayouts lists payouts held by screening (set with payouts).
	heldPayouts func(r *http.Request, c *reqCtx, page pagination.Page) (any, bool, error)
}

// New makes the portal.
func New(cfg Config) (*Portal, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Uploads == nil {
		cfg.Uploads = httpx.NewDefaultUploadSlots()
	}
	pages, err := loadPages()
	if err != nil {
		return nil, err
	}
	return &Portal{cfg: cfg, pages: pages, httpsPublic: strings.HasPrefix(cfg.PublicURL, "https://"),
		hashing: make(chan struct{}, 4), uploads: cfg.Uploads}, nil
}

// Cleanup deletes expired sessions and old login failures; the app runs it
// periodically.
func (p *Portal) Cleanup(ctx context.Context) error { return p.purgeSessions(ctx) }

// Register mounts the portal on mux under /portal. Pages of a mode live on
// their own router (mounted at /portal/test/ and /portal/live/), so their
// patterns never collide with the assets and login paths.
func (p *Portal) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /portal/{$}", p.root)
	mux.HandleFunc("GET /portal/login", p.loginPage)
	mux.HandleFunc("POST /portal/login", p.login)
	mux.HandleFunc("GET /portal/login/verify", p.verifyPage)
	mux.HandleFunc("POST /portal/login/verify", p.verify)
	mux.HandleFunc("POST /portal/logout", p.logout)
	mux.HandleFunc("GET /portal/password", p.setPasswordPage)
	mux.HandleFunc("POST /portal/password", p.setPassword)
	mux.Handle("GET /portal/assets/", http.StripPrefix("/portal/assets/", assetHandler()))
	mux.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) { p.notFound(w, r, nil) })

	m := http.NewServeMux()
	m.Handle("GET /portal/{mode}/{$}", p.page(roleViewer, p.dashboard))
	m.Handle("GET /portal/{mode}/events", p.page(roleViewer, p.eventsList))
	m.Handle("GET /portal/{mode}/api_keys", p.page(roleViewer, p.keysPage))
	m.Handle("POST /portal/{mode}/api_keys", p.page(roleAdmin, p.createKey))
	m.Handle("POST /portal/{mode}/api_keys/{id}/roll", p.page(roleAdmin, p.rollKey))
	m.Handle("POST /portal/{mode}/api_keys/{id}/revoke", p.page(roleAdmin, p.revokeKey))
	m.Handle("GET /portal/{mode}/users", p.page(roleAdmin, p.usersPage))
	m.Handle("POST /portal/{mode}/users", p.page(roleAdmin, p.createUser))
	m.Handle("POST /portal/{mode}/users/{id}/disable", p.page(roleAdmin, p.disableUser))
	m.Handle("GET /portal/{mode}/audit", p.page(roleAdmin, p.auditPage))
	m.Handle("GET /portal/{mode}/settings", p.page(roleViewer, p.settingsPage))
	m.Handle("GET /portal/{mode}/go-live", p.page(roleViewer, p.goLivePage))
	m.Handle("GET /portal/{mode}/search", p.page(roleViewer, p.searchPage))
	m.Handle("POST /portal/{mode}/settings", p.page(roleAdmin, p.updateSettings))
	m.Handle("POST /portal/{mode}/settings/changes/{id}/approve", p.page(roleAdmin, p.approveSettingsChange))
	m.Handle("GET /portal/{mode}/account", p.page(roleViewer, p.accountPage))
	m.Handle("POST /portal/{mode}/account/totp", p.page(roleViewer, p.totpStart))
	m.Handle("POST /portal/{mode}/account/totp/confirm", p.page(roleViewer, p.totpConfirm))
	m.Handle("POST /portal/{mode}/account/totp/disable", p.page(roleViewer, p.totpDisable))
	for _, c := range p.caps {
		c.routes(m)
	}
	m.Handle("/", p.page(roleViewer, func(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
		return errs.NotFound("page", r.URL.Path)
	}))
	mux.Handle("/portal/test/", m)
	mux.Handle("/portal/live/", m)
}

// capability is a group of pages over one capability's service, added with
// addCapability before Register.
type capability struct {
	nav    navItem
	routes func(m *http.ServeMux)
}

func (p *Portal) addCapability(c capability) { p.caps = append(p.caps, c) }

// Roles, in increasing power. Viewers read; approvers also act on money
// (approve, release, reject, cancel, retry, upload, redeliver, terminals);
// admins also manage keys, users and webhook endpoints and read the audit log.
type role int

const (
	roleViewer role = iota
	roleApprover
	roleAdmin
)

func roleOf(name string) role {
	switch name {
	case "admin":
		return roleAdmin
	case "approver":
		return roleApprover
	}
	return roleViewer
}

func (r role) String() string {
	return [...]string{"viewer", "approver", "admin"}[r]
}

// reqCtx is what a portal page handler knows about its request.
type reqCtx struct {
	sess *session
	mode string // "test" or "live"
	live bool
	csrf string
	ip   string
}

// principal is the signed-in user as the capabilities' services see it.
func (c *reqCtx) principal() auth.Principal {
	return auth.Principal{ID: c.sess.UserID, MerchantID: c.sess.MerchantID, Livemode: c.live, Kind: auth.KindUser, Role: c.sess.Role}
}

// ctx returns the request context carrying the user's principal.
func (c *reqCtx) ctx(r *http.Request) context.Context {
	return auth.WithPrincipal(r.Context(), c.principal())
}

// path builds a portal path in the request's mode.
func (c *reqCtx) path(parts ...string) string {
	return "/portal/" + c.mode + "/" + strings.Join(parts, "/")
}

type pageHandler func(w http.ResponseWriter, r *http.Request, c *reqCtx) error

// maxForm bounds a form body; CSV uploads get the bulk limit (10 MB) plus
// room for the other fields.
const (
	maxForm   = 64 << 10
	maxUpload = 10<<20 + 64<<10
)

// page wraps a handler with what every mode page needs: the mode from the
// path, a signed-in session, the CSRF check on POST, and the role check.
func (p *Portal) page(need role, h pageHandler) http.Handler {
	return p.pageLimit(need, maxForm, h)
}

// pageLimit is page for a form whose urlencoded body may exceed maxForm
// (a dispute's evidence: six texts of up to 20,000 characters each).
func (p *Portal) pageLimit(need role, limit int64, h pageHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w)
		mode := r.PathValue("mode")
		if mode == "" {
			mode, _, _ = strings.Cut(strings.TrimPrefix(r.URL.Path, "/portal/"), "/")
		}
		if mode != "test" && mode != "live" {
			p.notFound(w, r, nil)
			return
		}
		sess, err := p.loadSession(r.Context(), r)
		if err != nil {
			p.fail(w, r, nil, err)
			return
		}
		if sess == nil || sess.Stage != stageFull {
			if r.Method == http.MethodGet {
				target := "/portal/login?next=" + url.QueryEscape(r.URL.RequestURI())
				if sess != nil {
					target = "/portal/login/verify"
				}
				http.Redirect(w, r, target, http.StatusSeeOther)
				return
			}
			p.forbidden(w, r, nil, "session_required", "Your session has ended. Sign in again.")
			return
		}
		if sess.MustSetPassword {
			// The invitation password opens only the set-password form.
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/portal/password", http.StatusSeeOther)
				return
			}
			p.forbidden(w, r, nil, "password_change_required", "Choose your own password before doing anything else.")
			return
		}
		c := &reqCtx{sess: sess, mode: mode, live: mode == "live", csrf: sessionCSRF(sess), ip: clientIP(r)}
		if r.Method == http.MethodPost {
			// A large upload takes one of the user's slots before its body
			// is read, so one user cannot make the process parse many at once.
			release, ok := p.uploads.Acquire(sess.UserID, sess.MerchantID, r)
			if !ok {
				p.tooManyUploads(w, r, c)
				return
			}
			defer release()
			if err := parseForm(w, r, limit); err != nil {
				p.fail(w, r, c, err)
				return
			}
			if !sameOrigin(r) || !validToken(r.PostFormValue(csrfField), c.csrf) {
				p.auditAs(r.Context(), sess.MerchantID, c.live, sess.UserID, c.ip, "refused", r.URL.Path, "csrf_token_invalid", "")
				p.forbidden(w, r, c, "csrf_token_invalid", "The form's security token is missing or wrong. Reload the page and try again.")
				return
			}
		}
		if roleOf(sess.Role) < need {
			if r.Method == http.MethodPost {
				p.auditAs(r.Context(), sess.MerchantID, c.live, sess.UserID, c.ip, "refused", r.URL.Path, "permission_denied", "role "+sess.Role)
			}
			p.forbidden(w, r, c, "permission_denied", "Your role ("+sess.Role+") cannot do this; it needs "+need.String()+".")
			return
		}
		if err := h(w, r, c); err != nil {
			p.fail(w, r, c, err)
		}
	})
}

// parseForm reads a POST body within its limit: multipart for uploads,
// urlencoded otherwise.
func parseForm(w http.ResponseWriter, r *http.Request, limit int64) error {
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "multipart/form-data") {
		r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return tooLargeOrInvalid(err)
		}
		return checkFormText(r)
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		return tooLargeOrInvalid(err)
	}
	return checkFormText(r)
}

// checkFormText refuses a form field that is not valid UTF-8 or holds a NUL:
// no field takes one, and PostgreSQL cannot store one.
func checkFormText(r *http.Request) error {
	for k, vs := range r.PostForm {
		for _, v := range vs {
			if !httpx.CleanText(v) {
				return errs.Invalid(k, "invalid_form", "the field %s must be text (valid UTF-8, no NUL)", strings.ToValidUTF8(k, "?"))
			}
		}
	}
	return nil
}

func tooLargeOrInvalid(err error) error {
	if strings.Contains(err.Error(), "too large") {
		return &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Message: "the form is larger than this page accepts"}
	}
	return errs.Invalid("", "invalid_form", "the form could not be read")
}

// securityHeaders: no framing, no external anything, no caching of pages
// that can show a secret once.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// root sends a visitor to the dashboard in test mode, or to sign in.
func (p *Portal) root(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w)
	http.Redirect(w, r, "/portal/test/", http.StatusSeeOther)
}

// fail renders err as a page with the status the API would give it.
func (p *Portal) fail(w http.ResponseWriter, r *http.Request, c *reqCtx, err error) {
	status := httpx.HTTPStatus(err)
	e := errs.As(err)
	if e == nil || status >= 500 {
		httpx.LoggerFrom(r.Context()).Error("portal internal error", "err", err, "path", requestlog.RedactPath(r.URL.Path))
		if e == nil || e.Kind != errs.KindUnavailable {
			e = errs.Internal(err) // an unavailable service's message is written for the user
		}
	}
	if e.Kind == errs.KindNotFound {
		p.notFound(w, r, c)
		return
	}
	p.render(w, r, c, status, "error", &view{Title: http.StatusText(status), Error: e.Message, ErrorCode: e.Code})
}

// tooManyUploads refuses an upload while the user already has
// httpx.MaxUploadsPerKey large ones in flight (or the merchant
// httpx.MaxUploadsPerMerchant, or the process its total): 429 with
// Retry-After, the body left unread.
func (p *Portal) tooManyUploads(w http.ResponseWriter, r *http.Request, c *reqCtx) {
	httpx.RefuseUpload(w)
	w.Header().Set("Retry-After", "1")
	msg := fmt.Sprintf("Too many large uploads in progress (at most %d per user and %d per merchant at once). Wait for one to finish, then upload this file again.", httpx.MaxUploadsPerKey, httpx.MaxUploadsPerMerchant)
	p.render(w, r, c, http.StatusTooManyRequests, "error", &view{Title: "Too many uploads", Error: msg, ErrorCode: "too_many_uploads"})
}

func (p *Portal) forbidden(w http.ResponseWriter, r *http.Request, c *reqCtx, code, msg string) {
	p.render(w, r, c, http.StatusForbidden, "error", &view{Title: "Forbidden", Error: msg, ErrorCode: code})
}

// notFound is the one answer for a page that does not exist and for an
// object the user may not see (another merchant's, the other mode's), so the
// two cannot be told apart.
func (p *Portal) notFound(w http.ResponseWriter, r *http.Request, c *reqCtx) {
	securityHeaders(w)
	p.render(w, r, c, http.StatusNotFound, "error", &view{Title: "Not found", Error: "There is no such page or object here.", ErrorCode: "resource_missing"})
}

// redirect answers a successful action: 303 to a page, with a notice key
// that page shows (Post/Redirect/Get, so a reload does not repeat it).
func redirect(w http.ResponseWriter, r *http.Request, path, notice string) error {
	if notice != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "done=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

// safeNext accepts only a portal path as a post-login destination (no open
// redirect to another site).
func safeNext(next string) string {
	if strings.HasPrefix(next, "/portal/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") &&
		!strings.HasPrefix(next, "/portal/login") {
		return next
	}
	return "/portal/test/"
}

// now is the portal's clock (the database's, which tests can fix).
func (p *Portal) now() time.Time { return p.cfg.DB.Now() }
