// Package apidocs renders payd's API reference, served at /docs, from the
// embedded OpenAPI description (api/openapi.yaml). The page is built once, on
// the server, as plain HTML with one inline style sheet: it needs no
// JavaScript, loads nothing from anywhere (its Content-Security-Policy forbids
// every fetch), and reads in a browser with scripts turned off or in a text
// browser. Operations are grouped by tag in the order the document declares
// its tags, each with its parameters, request body, responses and examples;
// the shared schemas follow, each linked from where it is used.
package apidocs

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/payd/payd/api"
)

// Reference is the rendered page and the document it was rendered from.
type Reference struct {
	page  []byte
	title string
	index []searchEntry
	etag  string
	csp   string
	spec  []byte
}

// Lazy is the reference of the embedded api/openapi.yaml, rendered on the
// first request for it (so CLI commands, which never serve it, do not pay
// for it).
type Lazy struct {
	once sync.Once
	ref  *Reference
	err  error
}

// New returns the reference of the embedded api/openapi.yaml.
func New() *Lazy { return &Lazy{} }

// Get renders the reference once and returns it.
func (l *Lazy) Get() (*Reference, error) {
	l.once.Do(func() { l.ref, l.err = Render(api.OpenAPI) })
	return l.ref, l.err
}

// Register mounts GET /docs and GET /docs/openapi.yaml (see
// Reference.Register), rendering the page on first use.
func (l *Lazy) Register(mux *http.ServeMux) {
	serve := func(f func(*Reference, http.ResponseWriter, *http.Request)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			ref, err := l.Get()
			if err != nil {
				http.Error(w, "the API reference could not be rendered", http.StatusInternalServerError)
				return
			}
			f(ref, w, r)
		}
	}
	mux.HandleFunc("GET /docs", serve((*Reference).servePage))
	mux.HandleFunc("GET /docs/{$}", serve((*Reference).servePage))
	mux.HandleFunc("GET /docs/openapi.yaml", serve((*Reference).serveSpec))
}

// Render renders the reference from an OpenAPI 3.1 document in YAML.
func Render(spec []byte) (*Reference, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return nil, fmt.Errorf("apidocs: parse OpenAPI document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("apidocs: the OpenAPI document is not a mapping")
	}
	d := &document{root: root.Content[0]}
	page, err := d.render()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(page)
	styleSum := sha256.Sum256([]byte(styleSheet))
	return &Reference{
		page:  page,
		title: str(get(d.root, "info"), "title"),
		index: d.index,
		etag:  `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		// Nothing but the one inline style sheet, by its hash: no script, image,
		// font, frame or connection of any origin, this one included. The
		// search form submits to this server only.
		csp: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(styleSum[:]) +
			"'; img-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		spec: spec,
	}, nil
}

// Register mounts GET /docs (the page) and GET /docs/openapi.yaml (the
// document itself) on mux. Both are public: the API description holds no
// secret.
func (ref *Reference) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /docs", ref.servePage)
	mux.HandleFunc("GET /docs/{$}", ref.servePage)
	mux.HandleFunc("GET /docs/openapi.yaml", ref.serveSpec)
}

// Page returns the rendered HTML.
func (ref *Reference) Page() []byte { return ref.page }

// ContentSecurityPolicy returns the policy the page is served with.
func (ref *Reference) ContentSecurityPolicy() string { return ref.csp }

func (ref *Reference) servePage(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query().Get("q"); q != "" {
		ref.serveSearch(w, q)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", ref.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", ref.etag)
	if r.Header.Get("If-None-Match") == ref.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(ref.page)))
	_, _ = w.Write(ref.page)
}

func (ref *Reference) serveSpec(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/yaml; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("Content-Length", strconv.Itoa(len(ref.spec)))
	_, _ = w.Write(ref.spec)
}
