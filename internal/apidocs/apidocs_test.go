package apidocs

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/payd/payd/api"
)

func serve(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	New().Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func fetch(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

// TestEveryOperationAppears checks that each operation of api/openapi.yaml
// has its section on the page (by operationId), with its method, path and
// summary, and that each named schema has its own.
func TestEveryOperationAppears(t *testing.T) {
	srv := serve(t)
	resp, page := fetch(t, srv.URL+"/docs")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(api.OpenAPI, &root); err != nil {
		t.Fatal(err)
	}
	d := &document{root: root.Content[0]}
	ops := d.operations()
	if len(ops) < 79 {
		t.Fatalf("only %d operations in the document", len(ops))
	}
	for _, o := range ops {
		id := str(o.op, "operationId")
		i := strings.Index(page, `<article class="op" id="`+id+`">`)
		if i < 0 {
			t.Errorf("%s %s (%s) has no section", o.method, o.path, id)
			continue
		}
		section := page[i:]
		section = section[:strings.Index(section, "</article>")]
		if !strings.Contains(section, strings.ToUpper(o.method)+`</span> <code class="path">`+esc(o.path)+`</code>`) {
			t.Errorf("%s: the section does not show %s %s", id, strings.ToUpper(o.method), o.path)
		}
		if !strings.Contains(section, prose(str(o.op, "summary"))) {
			t.Errorf("%s: the section does not show its summary", id)
		}
		if !strings.Contains(page, `href="#`+id+`"`) {
			t.Errorf("%s: not linked from the navigation", id)
		}
	}
	pairs(get(get(d.root, "components"), "schemas"), func(name string, _ *yaml.Node) {
		if !strings.Contains(page, `id="schema-`+name+`"`) {
			t.Errorf("schema %s has no section", name)
		}
	})
	// Examples are rendered (one request and one response example checked).
	for _, want := range []string{`&#34;customer_msisdn&#34;: &#34;+25377123456&#34;`, `&#34;object&#34;: &#34;payment_intent&#34;`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the example text %s", want)
		}
	}
}

var attr = regexp.MustCompile(`(?i)\s(href|src|action|srcset|poster|data|formaction)\s*=\s*"([^"]*)"`)

// TestNoOutsideReference checks that the page cannot make the browser fetch
// anything: no script, style sheet, image, font, frame or form; every link
// stays on this page or this server; and the Content-Security-Policy forbids
// every fetch but the page's own inline style.
func TestNoOutsideReference(t *testing.T) {
	srv := serve(t)
	resp, page := fetch(t, srv.URL+"/docs")
	lower := strings.ToLower(page)
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "<form", "<svg", "<video", "<audio",
		"@import", "url(", "@font-face", "javascript:"} {
		if strings.Contains(lower, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	links := attr.FindAllStringSubmatch(page, -1)
	if len(links) < 100 {
		t.Fatalf("only %d links found: the check would prove nothing", len(links))
	}
	for _, m := range links {
		v := m[2]
		if !(strings.HasPrefix(v, "#") || (strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//"))) {
			t.Errorf("%s=%q leaves the server", m[1], v)
		}
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'sha256-", "img-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	for _, bad := range []string{"http:", "https:", "*", "'unsafe-inline'", "'self'", "script-src"} {
		if strings.Contains(csp, bad) {
			t.Errorf("Content-Security-Policy %q allows %q", csp, bad)
		}
	}
	// The hash in the policy is the hash of the style the page carries, so the
	// page is styled under its own policy.
	if !strings.Contains(page, "<style>"+styleSheet+"</style>") {
		t.Error("the page's style is not the hashed style sheet")
	}
}

// TestServesTheDocument checks that /docs/openapi.yaml is the embedded file
// and that a repeated request for the page can be answered 304.
func TestServesTheDocument(t *testing.T) {
	srv := serve(t)
	resp, body := fetch(t, srv.URL+"/docs/openapi.yaml")
	if resp.StatusCode != http.StatusOK || body != string(api.OpenAPI) {
		t.Fatalf("GET /docs/openapi.yaml: %d, %d bytes (want %d)", resp.StatusCode, len(body), len(api.OpenAPI))
	}
	first, _ := fetch(t, srv.URL+"/docs")
	req, _ := http.NewRequest("GET", srv.URL+"/docs", nil)
	req.Header.Set("If-None-Match", first.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional GET: %d, want 304", again.StatusCode)
	}
}

// TestMarkdown checks the small Markdown the descriptions use.
func TestMarkdown(t *testing.T) {
	got := markdown("First `a<b` line\ncontinues.\n\n- one\n  more\n- two\n\nLast.")
	want := "<p>First <code>a&lt;b</code> line continues.</p><ul><li>one more</li><li>two</li></ul><p>Last.</p>"
	if got != want {
		t.Fatalf("markdown:\n got %s\nwant %s", got, want)
	}
}
