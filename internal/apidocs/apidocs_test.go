package apidocs

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/payd/payd/api"
	"github.com/payd/payd/internal/sdkgen/naming"
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
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "<svg", "<video", "<audio",
		"@import", "@font-face", "javascript:"} {
		if strings.Contains(lower, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	// Only the style sheet could fetch through url(); the samples mention
	// WithBaseURL(...), which is text.
	if strings.Contains(strings.ToLower(styleSheet), "url(") {
		t.Error("the style sheet fetches with url()")
	}
	// The one form is the search, sent to this server.
	if forms := strings.Count(lower, "<form"); forms != 1 || !strings.Contains(page, `<form class="search" action="/docs" method="get"`) {
		t.Errorf("%d forms; want only the search form to /docs", forms)
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
	for _, want := range []string{"default-src 'none'", "style-src 'sha256-", "img-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	// 'self' is allowed for the search form's target, nowhere else.
	for _, bad := range []string{"http:", "https:", "*", "'unsafe-inline'", "'self'", "script-src", "connect-src"} {
		if strings.Contains(strings.Replace(csp, "form-action 'self'", "", 1), bad) {
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

// TestSamplesForEveryOperation checks that each operation's section holds a
// sample in curl, Go, TypeScript and Python, each calling that operation: the
// curl sample its method and path, the SDK samples the method the SDK
// generator names after its operationId.
func TestSamplesForEveryOperation(t *testing.T) {
	srv := serve(t)
	_, page := fetch(t, srv.URL+"/docs")
	set, err := LoadSamples(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	all := set.Operations(SampleValues{})
	if len(all) < 79 {
		t.Fatalf("only %d operations have samples", len(all))
	}
	for _, s := range all {
		i := strings.Index(page, `<article class="op" id="`+s.OperationID+`">`)
		if i < 0 {
			t.Errorf("%s has no section", s.OperationID)
			continue
		}
		section := page[i:]
		section = section[:strings.Index(section, "</article>")]
		for _, lang := range Languages {
			want := `<details class="sample" data-lang="` + lang + `"`
			if strings.Count(section, want) != 1 {
				t.Errorf("%s: no %s sample", s.OperationID, lang)
			}
			if !strings.Contains(section, esc(s.Code[lang])) {
				t.Errorf("%s: the %s sample is not the generated one", s.OperationID, lang)
			}
		}
		path := s.Path
		for _, p := range s.PathParams {
			path = strings.Replace(path, "{"+p+"}", "", 1)
		}
		for lang, want := range map[string][]string{
			"curl":       {strings.SplitN(path, "//", 2)[0]},
			"Go":         {"c." + naming.Pascal(s.OperationID) + "(ctx"},
			"TypeScript": {"payd." + naming.Camel(s.OperationID) + "("},
			"Python":     {"payd." + naming.Snake(s.OperationID) + "("},
		} {
			for _, w := range want {
				if !strings.Contains(s.Code[lang], w) {
					t.Errorf("%s: the %s sample lacks %q:\n%s", s.OperationID, lang, w, s.Code[lang])
				}
			}
		}
		if s.Method != "GET" && !strings.Contains(s.Code["curl"], "-X "+s.Method) {
			t.Errorf("%s: the curl sample does not send %s", s.OperationID, s.Method)
		}
		if s.Idempotent {
			for lang, w := range map[string]string{"curl": "Idempotency-Key: ", "Go": "client.WithIdempotencyKey(", "TypeScript": "idempotencyKey: ", "Python": "idempotency_key="} {
				if !strings.Contains(s.Code[lang], w) {
					t.Errorf("%s: requires an Idempotency-Key but the %s sample sends none", s.OperationID, lang)
				}
			}
		}
		if !s.Public && !strings.Contains(s.Code["curl"], `Authorization: Bearer $PAYD_API_KEY`) {
			t.Errorf("%s: the curl sample sends no key", s.OperationID)
		}
	}
}

// TestSearch checks GET /docs?q=: an operation is found by its summary, its
// operationId, its path template and a concrete path; the answer links to
// the operation's section and is served under the same policy as the page.
func TestSearch(t *testing.T) {
	srv := serve(t)
	for _, c := range []struct {
		q    string
		want string // an operationId among the results
		not  string // an operationId not among them
	}{
		{"create a refund", "createRefund", "listRefunds"},
		{"createPaymentIntent", "createPaymentIntent", "getPaymentIntent"},
		{"/v1/refunds/{id}", "getRefund", "listPayouts"},
		{"/v1/refunds/re_01JQ3ZK8WQ5N2C7R4T6V8X0Y2A", "getRefund", "listRefunds"},
		{"POST /v1/payment_intents/pi_123/capture", "capturePaymentIntent", "confirmPaymentIntent"},
	} {
		resp, page := fetch(t, srv.URL+"/docs?q="+url.QueryEscape(c.q))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search %q: %d", c.q, resp.StatusCode)
		}
		if !strings.Contains(page, `href="/docs#`+c.want+`"`) {
			t.Errorf("search %q does not find %s", c.q, c.want)
		}
		if strings.Contains(page, `href="/docs#`+c.not+`"`) {
			t.Errorf("search %q finds %s", c.q, c.not)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'") || !strings.Contains(page, "<style>"+styleSheet+"</style>") {
			t.Errorf("search page policy %q or style differs from the reference's", csp)
		}
		if strings.Contains(strings.ToLower(page), "<script") {
			t.Error("search page has a script")
		}
	}
	// Every operation is found by its name in the navigation (its summary).
	ref, err := Render(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.index) < 79 {
		t.Fatalf("only %d operations are searchable", len(ref.index))
	}
	for _, e := range ref.index {
		if !slices.Contains(ref.Search(e.summary), e.id) {
			t.Errorf("searching %q does not find %s", e.summary, e.id)
		}
		if !slices.Contains(ref.Search(e.id), e.id) {
			t.Errorf("searching %q does not find it", e.id)
		}
	}
	_, page := fetch(t, srv.URL+"/docs?q=nothing+like+this")
	if !strings.Contains(page, "No operation matches") || strings.Contains(page, `class="result"`) {
		t.Error("a search that matches nothing lists results")
	}
	// The query is escaped where it is shown, and bounded.
	_, page = fetch(t, srv.URL+"/docs?q="+url.QueryEscape(`<b>x</b>`+strings.Repeat("y", 5000)))
	if strings.Contains(page, "<b>x</b>") || strings.Contains(page, strings.Repeat("y", maxQuery)) {
		t.Error("the query is shown unescaped or unbounded")
	}
}
