package apptest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// specChecker validates real responses against api/openapi.yaml.
type specChecker struct {
	router routers.Router
	host   string // the host the router matches (specHost)
}

// specHost is the server URL's host in the one router every test shares; a
// checked request's URL is rebuilt on it.
const specHost = "payd.test"

var (
	specOnce    sync.Once
	specRouter  routers.Router
	specErr     error
	specCheckMu sync.Mutex // kin-openapi's validators are not documented as safe for concurrent use
)

// loadSpec parses and validates api/openapi.yaml once per test process (it
// takes seconds under the race detector) and shares its router.
func loadSpec(t testing.TB, baseURL string) *specChecker {
	t.Helper()
	specOnce.Do(func() {
		doc, err := readFile(SpecPath(t))
		if err != nil {
			specErr = fmt.Errorf("read OpenAPI document: %w", err)
			return
		}
		loaded, err := openapi3.NewLoader().LoadFromData(doc)
		if err != nil {
			specErr = fmt.Errorf("load api/openapi.yaml: %w", err)
			return
		}
		if err := loaded.Validate(context.Background()); err != nil {
			specErr = fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)
			return
		}
		loaded.Servers = openapi3.Servers{{URL: "http://" + specHost}}
		if specRouter, err = legacy.NewRouter(loaded); err != nil {
			specErr = fmt.Errorf("route api/openapi.yaml: %w", err)
		}
	})
	if specErr != nil {
		t.Fatal(specErr)
	}
	return &specChecker{router: specRouter, host: specHost}
}

// documented reports whether a path must appear in the OpenAPI document.
func documented(path string) bool {
	return strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/banking/v1/") ||
		path == "/healthz" || path == "/readyz" || strings.HasPrefix(path, "/providers/")
}

func (s *specChecker) check(t testing.TB, method, path string, reqHeader http.Header, reqBody []byte, resp *Response) {
	t.Helper()
	p := path
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if !documented(p) {
		return
	}
	req, _ := http.NewRequest(method, "http://placeholder"+path, bytes.NewReader(reqBody))
	req.Header = reqHeader.Clone()
	// The router matches the server URL's host; rebuild the URL on it.
	req.URL.Scheme, req.URL.Host = "http", s.host
	specCheckMu.Lock()
	defer specCheckMu.Unlock()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		if resp.Status == http.StatusNotFound && strings.Contains(string(resp.Body), "unrecognised request URL") {
			return // a deliberately unknown URL
		}
		t.Errorf("OpenAPI: %s %s (answered %d) is not in api/openapi.yaml: %v", method, p, resp.Status, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true, ExcludeRequestQueryParams: true}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(resp.Body)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		body := string(resp.Body)
		if len(body) > 600 {
			body = body[:600] + "…"
		}
		t.Errorf("OpenAPI: response to %s %s (%d) does not match api/openapi.yaml: %v\nbody: %s", method, p, resp.Status, err, body)
	}
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
