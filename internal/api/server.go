// Package api is payd's HTTP layer: routing, the middleware every request
// passes (request id, access log, metrics, authentication, rate limit, body
// limit, idempotency), the error envelope, and one file per resource whose
// handlers only decode, call a capability's service and encode.
package api

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/httpx"
	"github.com/payd/payd/internal/idempotency"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/requestlog"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/tracing"
)

// HandlerFunc is a handler that returns its error for WriteError to answer.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ClaimedFunc is a HandlerFunc that receives its request's idempotency
// claim, which it hands to the capability operation it calls: the run's
// claim for a POST with an Idempotency-Key, store.NoClaim for any other
// request.
type ClaimedFunc func(w http.ResponseWriter, r *http.Request, cl store.Claim) error

// DefaultMaxBody is the JSON body limit (1 MiB).
const DefaultMaxBody = 1 << 20

// Options of one route.
type route struct {
	public           bool
	allowPublishable bool
	testOnly         bool
	maxBody          int64
	requireIdemKey   bool
	skipIdempotency  bool
	upload           bool
	claimAtOnce      bool
}

// RouteOption configures a route.
type RouteOption func(*route)

// Public routes need no API key.
func Public() RouteOption { return func(r *route) { r.public = true } }

// AllowPublishable lets a publishable key call the route (OTP confirm), from
// a browser too: the route answers CORS for publishable keys (cors.go).
func AllowPublishable() RouteOption { return func(r *route) { r.allowPublishable = true } }

// TestModeOnly refuses live keys with 403 (the sandbox endpoints).
func TestModeOnly() RouteOption { return func(r *route) { r.testOnly = true } }

// MaxBody raises or lowers the body limit.
func MaxBody(n int64) RouteOption { return func(r *route) { r.maxBody = n } }

// RequireIdempotencyKey makes the Idempotency-Key header mandatory.
func RequireIdempotencyKey() RouteOption { return func(r *route) { r.requireIdemKey = true } }

// NoIdempotency exempts a POST from idempotency (for endpoints that stream or
// whose answers must not be replayed).
func NoIdempotency() RouteOption { return func(r *route) { r.skipIdempotency = true } }

// ClaimAtOnce marks a route whose handler writes before any slow work (no
// provider, DNS or other network call, no wait, before its first write; a
// provider call after a recovery point is fine, since the checkpoint's commit
// gives the connection back). On PostgreSQL such a request claims its key in
// the round trip that begins its transaction, before its handler runs, which
// saves a round trip and closes the window in which another process's run
// commits the same key meanwhile. It also holds a pooled connection from the
// start, which is why it is not the default: a handler that did slow work
// first would let a client tie up the pool.
func ClaimAtOnce() RouteOption { return func(r *route) { r.claimAtOnce = true } }

// Config is what the HTTP layer needs.
type Config struct {
	DB        *store.DB
	Merchants *merchants.Service
	Logger    *slog.Logger
	Registry  *prometheus.Registry
	// Uploads bounds large uploads in flight per key, per merchant and in
	// total; the app shares one with the portal. Nil: a fresh default one.
	Uploads   *httpx.UploadSlots
	RateLimit float64 // requests per second per key; 0 disables
	RateBurst int
	// PublicRateLimit is requests per second per client address on public
	// routes (burst twice that); 0 means the default, negative disables.
	PublicRateLimit float64
	// IdempotencyLease is how long a key whose request committed a recovery
	// point stays locked to its run (0: idempotency.Lease).
	IdempotencyLease time.Duration
}

// Server routes requests.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	limiter *rateLimiter
	public  *clientLimiter
	metrics *httpMetrics
	uploads *httpx.UploadSlots
	handler http.Handler
	// running holds the idempotency keys of requests in flight in this
	// process (see idempotent).
	running idempotency.Flights
	// pausing counts the requests of this process that wait to run again
	// after losing their database connection; maxPausing bounds them and
	// patience bounds how long one waits (see runAgain).
	pausing    atomic.Int32
	maxPausing int32
	patience   time.Duration
	// requestLog receives each finished API request of a merchant's key
	// (SetRequestLog); nil keeps none.
	requestLog RequestRecorder

	routesMu sync.Mutex
	routes   []Route
}

// Route describes one registered API route.
type Route struct {
	// Pattern is the ServeMux pattern, such as "POST /v1/payouts/{id}/approve".
	Pattern string
	// Public routes need no API key; TestOnly routes answer test keys only.
	Public, TestOnly bool
	// MaxBody is the route's body limit in bytes.
	MaxBody int64
}

// Routes lists every route registered with Handle, in registration order
// (the abuse suite floods each one).
func (s *Server) Routes() []Route {
	s.routesMu.Lock()
	defer s.routesMu.Unlock()
	return append([]Route(nil), s.routes...)
}

// RequestRecorder keeps finished API requests (internal/requestlog). Record
// must not block and must not write to the database in the caller: it runs
// after the request's own commit, on the request's goroutine.
type RequestRecorder interface {
	Record(requestlog.Entry)
}

// SetRequestLog makes the server hand every finished API request made with a
// merchant's key to rl. Call it before serving.
func (s *Server) SetRequestLog(rl RequestRecorder) { s.requestLog = rl }

// NewServer makes a server with the core routes registered.
func NewServer(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Uploads == nil {
		cfg.Uploads = httpx.NewDefaultUploadSlots()
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), metrics: newHTTPMetrics(cfg.Registry),
		uploads: cfg.Uploads, maxPausing: maxPausing, patience: connLostPatience}
	if cfg.RateLimit > 0 {
		s.limiter = newRateLimiter(cfg.RateLimit, cfg.RateBurst)
	}
	switch {
	case cfg.PublicRateLimit == 0:
		s.public = newClientLimiter(defaultPublicRate, defaultPublicBurst, maxClients)
	case cfg.PublicRateLimit > 0:
		s.public = newClientLimiter(cfg.PublicRateLimit, int(2*cfg.PublicRateLimit)+1, maxClients)
	}
	s.handler = s.outer(s.mux)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, &errs.Error{Kind: errs.KindNotFound, Code: "resource_missing", Message: "unrecognised request URL (" + r.Method + " " + r.URL.Path + ")"})
	})
	s.registerCore()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Mux exposes the router so non-API surfaces (hosted pages, portal) can mount
// their own handlers; they still pass the outer middleware.
func (s *Server) Mux() *http.ServeMux { return s.mux }

// Handle registers an API route such as "GET /v1/payment_intents" whose
// handler needs no claim: nothing it calls takes one.
func (s *Server) Handle(pattern string, h HandlerFunc, opts ...RouteOption) {
	s.HandleClaimed(pattern, func(w http.ResponseWriter, r *http.Request, _ store.Claim) error { return h(w, r) }, opts...)
}

// HandleClaimed registers an API route such as "POST /v1/payment_intents"
// whose handler takes the request's claim (ClaimedFunc).
func (s *Server) HandleClaimed(pattern string, h ClaimedFunc, opts ...RouteOption) {
	rt := route{maxBody: DefaultMaxBody}
	for _, o := range opts {
		o(&rt)
	}
	s.mux.Handle(pattern, s.inner(rt, h))
	s.routesMu.Lock()
	s.routes = append(s.routes, Route{Pattern: pattern, Public: rt.public, TestOnly: rt.testOnly, MaxBody: rt.maxBody})
	s.routesMu.Unlock()
	if rt.allowPublishable {
		s.handlePreflight(pattern)
	}
}

// outer wraps every request: request id, access log, metrics, panic recovery.
func (s *Server) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		reqID := ids.New("req_")
		// What the request needs for its whole life, in one allocation: the
		// recorder of its answer, the slot the inner middleware fills with
		// its principal, its id and logger as its context carries them.
		st := &requestState{rec: statusRecorder{ResponseWriter: w, status: 200}}
		rec := &st.rec
		// Formatted only if something logs it: at log level warn most requests log nothing.
		log := st.log.Init(s.cfg.Logger, slog.String("request_id", reqID))
		// The request's span (tracing off: none, and ctx unchanged).
		ctx, span := tracing.StartServer(r.Context(), r)
		if span.Recording() {
			span.SetString("payd.request_id", reqID)
			log = log.With("trace_id", span.TraceID())
		}
		st.info = httpx.Request{ID: reqID, Log: log}
		// Inner middleware fills the principal slot so the access log can name the principal.
		r = r.WithContext(auth.WithSlot(httpx.WithRequestInfo(ctx, &st.info), &st.principal))
		h := w.Header()
		h["Request-Id"] = []string{reqID}
		h["Api-Version"] = apiVersionHeader
		defer func() {
			if p := recover(); p != nil {
				log.Error("panic serving request", "panic", p)
				if !rec.wrote {
					WriteError(rec, r, errs.Internal(nil))
				}
			}
			d := time.Since(start)
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			s.metrics.observe(route, rec.status, d)
			// A client may put a secret in the path (a key, a card number):
			// neither the access log nor the request log keeps it.
			path := requestlog.RedactPath(r.URL.Path)
			// The access log's attributes are built only when it is written.
			logged := log.Enabled(r.Context(), slog.LevelInfo)
			var attrs []slog.Attr
			if logged {
				attrs = []slog.Attr{slog.String("method", r.Method), slog.String("path", path), slog.String("route", route),
					slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes), slog.Float64("duration_ms", float64(d.Microseconds())/1000)}
			}
			if pr, ok := st.principal.Principal(); ok && pr.ID != "" {
				if logged {
					attrs = append(attrs, slog.String("merchant_id", pr.MerchantID), slog.String("principal_id", pr.ID), slog.Bool("livemode", pr.Livemode))
				}
				span.SetString("payd.merchant_id", pr.MerchantID)
				span.SetBool("payd.livemode", pr.Livemode)
				// Reading the request log is not itself logged, so that
				// `payd logs tail --follow` does not fill the log it shows.
				if s.requestLog != nil && pr.MerchantID != "" && route != requestLogsRoute {
					s.requestLog.Record(requestlog.Entry{MerchantID: pr.MerchantID, Livemode: pr.Livemode, PrincipalID: pr.ID,
						Method: r.Method, Path: path, Status: rec.status, RequestID: reqID, Latency: d, At: start.UTC()})
				}
			}
			if logged {
				log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
			}
			span.EndServer(r.Method, r.Pattern, rec.status)
		}()
		if err := checkEncoding(r); err != nil {
			WriteError(rec, r, err) // every surface: the API, the portal, hosted pages
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// requestState is what outer allocates once per request.
type requestState struct {
	rec       statusRecorder
	principal auth.Slot
	info      httpx.Request
	log       httpx.LazyOne
}

// apiVersionHeader is every answer's API-Version header value, shared: the
// header map holds it and nothing appends to it.
var apiVersionHeader = []string{APIVersion}

// inner applies the per-route middleware: auth, mode, rate limit, body limit
// and idempotency, then runs the handler and answers its error.
func (s *Server) inner(rt route, h ClaimedFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.allowPublishable {
			allowCrossOrigin(w, r)
		}
		if r.ContentLength > rt.maxBody {
			WriteError(w, r, &errs.Error{Kind: errs.KindTooLarge, Code: "request_too_large", Message: "the request body is larger than this endpoint accepts (" + strconv.FormatInt(rt.maxBody, 10) + " bytes)"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, rt.maxBody)
		if rt.public && s.public != nil {
			if wait, ok := s.public.allow(remoteHost(r)); !ok {
				secs := int(wait/time.Second) + 1
				WriteError(w, r, &errs.Error{Kind: errs.KindRateLimited, Code: "rate_limited",
					Message: "too many requests from this address; retry after " + strconv.Itoa(secs) + "s",
					Extra:   map[string]any{"retry_after": strconv.Itoa(secs)}})
				return
			}
		}
		if !rt.public {
			// Reading the key is the first thing a request does with the
			// database, and it changes nothing: while the database restarts
			// it pauses and reads again, as a keyed request's run does.
			arrived := time.Now()
			p, err := s.authenticate(r)
			for run := 1; store.IsConnLost(err) && s.runAgain(run, arrived, err); run++ {
				p, err = s.authenticate(r)
			}
			if err != nil {
				giveUp(w, r, err)
				return
			}
			if p.Kind == auth.KindPublishable && !rt.allowPublishable {
				WriteError(w, r, errs.Permission("permission_denied", "a publishable key cannot call this endpoint; use a secret key from your server"))
				return
			}
			if rt.testOnly && p.Livemode {
				WriteError(w, r, errs.Permission("permission_denied", "sandbox endpoints answer only test-mode keys"))
				return
			}
			if slot := auth.SlotFrom(r.Context()); slot != nil {
				// The outer middleware's slot: the handler, the access log
				// and the request log all read the principal from it.
				slot.Fill(p)
			} else {
				r = r.WithContext(auth.WithPrincipal(r.Context(), p))
			}
			if s.limiter != nil {
				if wait, ok := s.limiter.allow(p.ID); !ok {
					secs := int(wait/time.Second) + 1
					WriteError(w, r, &errs.Error{Kind: errs.KindRateLimited, Code: "rate_limited",
						Message: "too many requests for this key; retry after " + strconv.Itoa(secs) + "s",
						Extra:   map[string]any{"retry_after": strconv.Itoa(secs)}})
					return
				}
			}
			if rt.upload {
				release, ok := s.uploads.Acquire(p.ID, p.MerchantID, r)
				if !ok {
					httpx.RefuseUpload(w)
					WriteError(w, r, errTooManyUploads())
					return
				}
				defer release()
			}
		}
		key := r.Header.Get("Idempotency-Key")
		if r.Method == http.MethodPost && !rt.public && !rt.skipIdempotency {
			if key == "" && rt.requireIdemKey {
				WriteError(w, r, errs.Invalid("Idempotency-Key", "idempotency_key_required", "this endpoint requires an Idempotency-Key header"))
				return
			}
			if key != "" {
				s.idempotent(w, r, key, rt, h)
				return
			}
		}
		if err := h(w, r, store.NoClaim); err != nil {
			if !errors.Is(err, store.ErrCommitUnknown) {
				// A read, or a write that did not commit, changed
				// nothing: one whose database was lost, refused or took
				// no writes is a 503 to retry, not a fault. (A write
				// whose commit may have landed is not "nothing done".)
				giveUp(w, r, err)
				return
			}
			WriteError(w, r, err)
		}
	})
}

func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || h[:len(prefix)] != prefix {
		return auth.Principal{}, &errs.Error{Kind: errs.KindUnauthenticated, Code: "invalid_api_key",
			Message: "no valid API key provided; send Authorization: Bearer <key>"}
	}
	return s.cfg.Merchants.Authenticate(r.Context(), h[len(prefix):])
}

// statusRecorder remembers the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status = code
		s.wrote = true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (server-sent events) flush.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// remoteHost is the connection's address without its port (X-Forwarded-For
// is not trusted: a client could forge it to dodge the per-address limit).
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// checkEncoding refuses a path or query that, once percent-decoded, is not
// valid UTF-8 or holds a NUL: no identifier payd issues does, and PostgreSQL
// refuses such text outright (which must not surface as a 500). A path is
// 404, as no object has that name; a query parameter is 400 naming it.
func checkEncoding(r *http.Request) error {
	if !httpx.CleanText(r.URL.Path) {
		return &errs.Error{Kind: errs.KindNotFound, Code: "resource_missing", Message: "no object has a name that is not valid UTF-8 or holds a NUL"}
	}
	if httpx.CleanText(r.URL.RawQuery) && !strings.Contains(r.URL.RawQuery, "%") {
		return nil
	}
	for k, vs := range r.URL.Query() {
		ok := httpx.CleanText(k)
		for _, v := range vs {
			ok = ok && httpx.CleanText(v)
		}
		if !ok {
			name := k
			if !utf8.ValidString(name) {
				name = strings.ToValidUTF8(name, "\ufffd")
			}
			return errs.Invalid(name, "parameter_invalid", "query parameter %s must be valid UTF-8 without NUL", name)
		}
	}
	return nil
}
