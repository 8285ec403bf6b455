package apptest

import (
	"bytes"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Portal is a script driving the merchant portal as a browser would: a
// cookie jar, forms posted with the csrf_token of the page they came from,
// redirects not followed (so tests see 303s and their targets).
type Portal struct {
	T      testing.TB
	Base   string
	Client *http.Client
	Jar    http.CookieJar
	// CSRF is the csrf_token of the last page fetched that had one.
	CSRF string
}

// Page is a fetched portal page.
type Page struct {
	Status   int
	Header   http.Header
	Body     string
	Location string
}

// NewPortal returns a portal client with an empty cookie jar.
func (e *Env) NewPortal() *Portal {
	jar, _ := cookiejar.New(nil)
	return &Portal{T: e.T, Base: e.URL, Jar: jar, Client: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

// Get fetches a page and remembers its CSRF token.
func (p *Portal) Get(path string) *Page {
	p.T.Helper()
	req, err := http.NewRequest("GET", p.Base+path, nil)
	if err != nil {
		p.T.Fatal(err)
	}
	return p.do(req)
}

// Post submits a form with the remembered CSRF token (unless form already
// has a csrf_token, even an empty one, which is then sent as given).
func (p *Portal) Post(path string, form url.Values) *Page {
	p.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", p.CSRF)
	} else if form.Get("csrf_token") == "" {
		form.Del("csrf_token")
	}
	req, err := http.NewRequest("POST", p.Base+path, strings.NewReader(form.Encode()))
	if err != nil {
		p.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return p.do(req)
}

// Upload submits a multipart form with one file part named file.
func (p *Portal) Upload(path string, fields url.Values, filename string, content []byte) *Page {
	p.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if fields == nil {
		fields = url.Values{}
	}
	if _, ok := fields["csrf_token"]; !ok {
		fields.Set("csrf_token", p.CSRF)
	}
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("file", filename)
	fw.Write(content)
	mw.Close()
	req, err := http.NewRequest("POST", p.Base+path, &buf)
	if err != nil {
		p.T.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return p.do(req)
}

func (p *Portal) do(req *http.Request) *Page {
	p.T.Helper()
	resp, err := p.Client.Do(req)
	if err != nil {
		p.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	pg := &Page{Status: resp.StatusCode, Header: resp.Header, Body: string(b), Location: resp.Header.Get("Location")}
	if m := csrfRE.FindStringSubmatch(pg.Body); m != nil {
		p.CSRF = html.UnescapeString(m[1])
	}
	return pg
}

// Login signs in with email and password and fails the test unless the
// portal answers 303 to a page of the portal.
func (p *Portal) Login(email, password string) {
	p.T.Helper()
	p.Get("/portal/login")
	pg := p.Post("/portal/login", url.Values{"email": {email}, "password": {password}})
	if pg.Status != http.StatusSeeOther || !strings.HasPrefix(pg.Location, "/portal/") {
		p.T.Fatalf("login as %s: %d %s\n%.600s", email, pg.Status, pg.Location, pg.Body)
	}
}

// Cookie returns the value of a cookie the jar holds for the portal.
func (p *Portal) Cookie(name string) string {
	u, _ := url.Parse(p.Base + "/portal/")
	for _, c := range p.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// Contains fails the test unless the page's text contains every s.
func (pg *Page) Contains(t testing.TB, s ...string) {
	t.Helper()
	for _, x := range s {
		if !strings.Contains(pg.Body, x) {
			t.Fatalf("page (%d) lacks %q:\n%.1500s", pg.Status, x, pg.Body)
		}
	}
}
