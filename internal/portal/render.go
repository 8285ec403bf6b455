package portal

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/webhooks"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// assetHandler serves the embedded stylesheet and scripts.
func assetHandler() http.Handler {
	sub, _ := fs.Sub(assetFS, "assets")
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// pageSet holds one template per page, each parsed with the layout.
type pageSet struct{ byName map[string]*template.Template }

func loadPages() (*pageSet, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	ps := &pageSet{byName: map[string]*template.Template{}}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, n)
		if err != nil {
			return nil, fmt.Errorf("portal template %s: %w", n, err)
		}
		ps.byName[base] = t
	}
	return ps, nil
}

// view is what every page template gets: the frame (user, mode, CSRF token,
// navigation, notices and errors) and the page's own Data.
type view struct {
	Title       string
	Section     string // which navigation entry is current
	User        *session
	Role        string
	Mode        string
	Live        bool
	CSRF        string
	Nav         []navItem
	SwitchURL   string // the same section in the other mode
	Notice      string
	Error       string            // the page's error message
	ErrorCode   string            // its machine code (e.g. self_approval_not_allowed)
	FieldErrors map[string]string // field name -> message, shown next to the field
	Form        url.Values        // what the user typed, to refill the form
	Data        any
	// names gives a person's name for a key, user or customer id
	// (names.go); nil outside a signed-in page.
	names func(id string) string
}

// Name is the name the page shows for id (the id itself when it has none).
func (v *view) Name(id string) string {
	if v == nil || v.names == nil {
		return id
	}
	return v.names(id)
}

// navItem is one entry of the navigation; Path is relative to the mode.
type navItem struct {
	Section string
	Label   string
	Path    string
	MinRole role
	// usable, when set, says whether the signed-in merchant can use the
	// section at all (bank transfers need a participant bank); the menu
	// hides it otherwise. The page itself still answers, saying why.
	usable func(ctx context.Context, c *reqCtx) bool
}

var baseNav = []navItem{
	{Section: "dashboard", Label: "Dashboard", Path: ""},
}

var tailNav = []navItem{
	{Section: "events", Label: "Events", Path: "events"},
	{Section: "api_keys", Label: "API keys", Path: "api_keys"},
	{Section: "users", Label: "Users", Path: "users", MinRole: roleAdmin},
	{Section: "audit", Label: "Audit log", Path: "audit", MinRole: roleAdmin},
	{Section: "settings", Label: "Settings", Path: "settings"},
	{Section: "golive", Label: "Go-live checklist", Path: "go-live", usable: func(_ context.Context, c *reqCtx) bool { return c.live }},
	{Section: "account", Label: "Account", Path: "account"},
}

// render writes a page. The frame is filled from c when the user is signed in.
func (p *Portal) render(w http.ResponseWriter, r *http.Request, c *reqCtx, status int, name string, v *view) {
	if c != nil {
		v.User = c.sess
		v.Role = c.sess.Role
		v.Mode = c.mode
		v.Live = c.live
		v.CSRF = c.csrf
		other := "live"
		if c.live {
			other = "test"
		}
		all := append(append(append([]navItem{}, baseNav...), p.capNav()...), tailNav...)
		ctx := context.Background()
		if r != nil {
			ctx = r.Context()
		}
		v.names = p.nameOf(ctx, c)
		for _, n := range all {
			if roleOf(c.sess.Role) >= n.MinRole && (n.usable == nil || n.usable(ctx, c)) {
				v.Nav = append(v.Nav, n)
			}
			if n.Section == v.Section {
				v.SwitchURL = "/portal/" + other + "/" + n.Path
			}
		}
		if v.SwitchURL == "" {
			v.SwitchURL = "/portal/" + other + "/"
		}
	}
	if v.Notice == "" && r != nil {
		v.Notice = notices[r.URL.Query().Get("done")]
	}
	t := p.pages.byName[name]
	var buf bytes.Buffer
	if t == nil {
		p.cfg.Logger.Error("portal: no template", "name", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		p.cfg.Logger.Error("portal: render", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}

func (p *Portal) capNav() []navItem {
	var out []navItem
	for _, c := range p.caps {
		if c.nav.Label != "" {
			out = append(out, c.nav)
		}
	}
	return out
}

// notices are the fixed messages a redirect after a successful action can
// ask for (?done=key); nothing from the URL is shown as such.
var notices = map[string]string{
	"logged_out":               "You are signed out.",
	"key_revoked":              "The key was revoked. Requests with it now fail with 401.",
	"user_created":             "The user was created. Give them their password through a safe channel.",
	"user_disabled":            "The user was disabled and signed out.",
	"totp_enabled":             "Two-factor authentication is on. You will be asked for a code at every sign-in.",
	"totp_disabled":            "Two-factor authentication is off.",
	"batch_created":            "The batch was created. Another user or key must approve it.",
	"batch_approved":           "The batch was approved; its rows are being paid out.",
	"batch_canceled":           "The batch was canceled.",
	"payout_approved":          "The payout was approved.",
	"refund_created":           "The refund was made.",
	"payment_captured":         "The payment was captured; the rest of the authorisation was released.",
	"payment_canceled":         "The payment was canceled.",
	"refund_requires_approval": "The refund is over the approval threshold: another user or key must approve it. Its amount is held meanwhile.",
	"refund_approved":          "The refund was approved and sent.",
	"refund_canceled":          "The refund was canceled; its amount is available again.",
	"evidence_saved":           "The evidence was saved. Submit it before the due date.",
	"evidence_submitted":       "The evidence was submitted; the bank will decide.",
	"dispute_closed":           "The dispute was closed: the loss is accepted and the amount stays withdrawn.",
	"payout_retried":           "The payout is being retried.",
	"payout_released":          "The payout was released from the compliance hold.",
	"payout_rejected":          "The payout was rejected.",
	"transfer_released":        "The transfer was released and settled.",
	"transfer_rejected":        "The transfer was rejected.",
	"terminal_registered":      "The terminal was registered. Activate it before taking payments.",
	"terminal_activated":       "The terminal is active.",
	"terminal_deregistered":    "The terminal was deregistered.",
	"endpoint_created":         "The webhook endpoint was created.",
	"endpoint_deleted":         "The webhook endpoint was deleted.",
	"redelivered":              "The event was queued for delivery again.",
	"endpoint_enabled":         "The webhook endpoint is enabled: its waiting deliveries are being sent.",
	"max_rate_set":             "The endpoint's delivery rate limit was saved.",
	"recovered":                "The endpoint's failed deliveries were queued for delivery again.",
	"recovered_more":           "Failed deliveries were queued for delivery again; more remain: recover again once these are sent.",
	"threshold_saved":          "The approval settings were saved.",
	"settings_change_approved": "The change was approved and applies now.",
	"clock_created":            "The test clock was created. Attach customers to it (test_clock) through the API.",
	"clock_advancing":          "The test clock was moved forward: what fell due up to its new time is billed while its status is advancing; this page refreshes until it is ready.",
	"subscription_canceled":    "The subscription was canceled. Its open invoices stay open, with no more automatic attempts.",
	"sub_ends_at_period_end":   "The subscription will end at the end of its current period.",
	"invoice_finalized":        "The invoice was finalized: it is open, and its customer page can be shared.",
	"invoice_pay_started":      "The customer's default payment was charged; the invoice is paid once the payment succeeds.",
	"invoice_voided":           "The invoice was voided.",
	"invoice_uncollectible":    "The invoice was marked uncollectible: no more automatic attempts; it can still be paid or voided.",
}

var funcs = template.FuncMap{
	"money": formatMoney,
	"when":  formatTime,
	"whenp": formatTimePtr,
	"unix":  func(sec int64) string { return formatTime(time.Unix(sec, 0)) },
	"date":  formatDate,
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"pct": func(a, b int) string {
		if b == 0 {
			return "–"
		}
		return strconv.Itoa(a*100/b) + "%"
	},
	"add":     func(a, b int) int { return a + b },
	"lower":   strings.ToLower,
	"isError": func(s string) bool { return s != "" && s != "ok" },
	"dict":    dict,
	"objpath": objectPath,
	"evpath":  eventObjectPath,
}

// collections maps an event's object type to its portal collection.
var collections = map[string]string{
	"payment_intent": "payment_intents", "payout": "payouts", "payout_batch": "batches",
	"transfer": "transfers", "terminal": "terminals", "webhook_endpoint": "webhook_endpoints",
	"customer": "customers", "subscription": "subscriptions", "invoice": "invoices",
	"dispute": "disputes",
}

// objectPath is the page of an event's object, or "" when it has none.
func objectPath(mode, objectType, id string) string {
	c, ok := collections[objectType]
	if !ok || id == "" {
		return ""
	}
	return "/portal/" + mode + "/" + c + "/" + url.PathEscape(id)
}

// eventObjectPath is the page of an event's object, or "" when it has none:
// a sandbox fixture (an event triggered without an object of the
// merchant's) names an object that does not exist, so it links nowhere
// rather than to a 404.
func eventObjectPath(mode string, e events.Event) string {
	if webhooks.IsFixture(e.Data) {
		return ""
	}
	return objectPath(mode, e.ObjectType, e.ObjectID)
}

// dict builds a map for passing several values to a sub-template.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		m[k] = kv[i+1]
	}
	return m
}

// formatMoney is the portal's one amount format: the currency, then the
// amount in major units with the currency's ISO 4217 exponent and a comma
// every three digits: DJF 1,500, ETB 42.00, USD 1,234.56. A currency payd
// does not know (none is accepted; an old row could hold one) shows its
// minor units, said so: XXZ 1,500 (minor units).
func formatMoney(minor int64, currency string) string {
	exp, err := money.Exponent(currency)
	unknown := err != nil
	if unknown {
		exp = 0
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = uint64(-minor)
	}
	s := strconv.FormatUint(u, 10)
	frac := ""
	if exp > 0 {
		for len(s) <= exp {
			s = "0" + s
		}
		frac = "." + s[len(s)-exp:]
		s = s[:len(s)-exp]
	}
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	sign := ""
	if neg {
		sign = "−"
	}
	if unknown {
		return currency + " " + sign + b.String() + " (minor units)"
	}
	return currency + " " + sign + b.String() + frac
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(*t)
}
