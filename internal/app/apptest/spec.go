package apptest

import (
	"bytes"
	"context"
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
	host   string // host:port of the server under test
}

var (
	specOnce sync.Once
	specDoc  []byte
	specErr  error
)

func loadSpec(t testing.TB, baseURL string) *specChecker {
	t.Helper()
	specOnce.Do(func() {
		specDoc, specErr = readFile(SpecPath(t))
	})
	if specErr != nil {
		t.Fatalf("read OpenAPI document: %v", specErr)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(specDoc)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: baseURL}}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("route api/openapi.yaml: %v", err)
	}
	return &specChecker{router: r, host: strings.TrimPrefix(baseURL, "http://")}
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
