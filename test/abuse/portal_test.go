package abuse_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
)

var (
	linkRE = regexp.MustCompile(`href="(/portal/(?:test|live)/[^"#]*)"`)
	formRE = regexp.MustCompile(`<form[^>]*method="post"[^>]*action="(/portal/[^"]+)"`)
)

// portalFields are the names the portal's forms use, each given a hostile
// value at once.
var portalFields = []string{"amount_minor", "currency", "description", "url", "email", "password", "role", "kind",
	"note", "decision", "ksn", "serial_number", "model", "label", "outlet_id", "approval_threshold_minor", "code",
	"reason", "enabled_events", "provider", "recipient_msisdn", "recipient_account", "recipient_name", "status", "type"}

// TestAbusePortal: the portal's pages are mounted on the router directly,
// so they are found by crawling as a signed-in admin would see them (every
// link and form reachable from the dashboard, in both modes, after a few
// objects exist), then every page is fetched with hostile queries and
// names, and every form posted with hostile fields, concurrently: no answer
// is a 5xx.
func TestAbusePortal(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		seedObjects(t, e)
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		pages, forms := crawl(t, admin)
		if len(pages) < 15 || len(forms) < 5 {
			t.Fatalf("the crawl found %d pages and %d forms; the portal is not wired", len(pages), len(forms))
		}
		admin.Get("/portal/test/")
		csrf := admin.CSRF

		type req struct {
			method, path string
			form         url.Values
		}
		var reqs []req
		for _, p := range pages {
			for _, q := range hostileQueries {
				sep := "?"
				if strings.Contains(p, "?") {
					sep = "&"
				}
				reqs = append(reqs, req{"GET", p + sep + strings.TrimPrefix(q, "?"), nil})
			}
			for _, n := range []string{"%FF", "%00", strings.Repeat("x", 4000), "..%2F..%2F"} {
				reqs = append(reqs, req{"GET", strings.TrimSuffix(p, "/") + "/" + n, nil})
			}
		}
		for _, f := range forms {
			if strings.HasSuffix(f, "/logout") {
				continue
			}
			for _, form := range hostileForms(csrf) {
				reqs = append(reqs, req{"POST", f, form})
			}
		}
		var mu sync.Mutex
		var problems []string
		statuses := map[int]int{}
		work := make(chan req)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for q := range work {
					status, err := portalSend(admin.Client, e.URL, q.method, q.path, q.form)
					mu.Lock()
					statuses[status]++
					if err != nil || status >= 500 {
						problems = append(problems, fmt.Sprintf("%s %s: %d %v", q.method, clip(q.path), status, err))
					}
					mu.Unlock()
				}
			}()
		}
		start := time.Now()
		for _, q := range reqs {
			work <- q
		}
		close(work)
		wg.Wait()
		t.Logf("%d portal pages and %d forms found; %d hostile requests in %s; statuses %v", len(pages), len(forms), len(reqs),
			time.Since(start).Round(time.Millisecond), statuses)
		if statuses[http.StatusForbidden] > len(reqs)/2 {
			t.Fatalf("most hostile requests were refused at the door (%v): the flood did not reach the pages", statuses)
		}
		for i, p := range problems {
			if i == 20 {
				break
			}
			t.Error(p)
		}
		if len(problems) > 0 {
			t.Fatalf("%d of %d hostile portal requests failed the server", len(problems), len(reqs))
		}
	}, func(c *app.Config) { c.PublicRateLimit = -1 })
}

// seedObjects makes one object of each kind the portal has a page for.
func seedObjects(t *testing.T, e *apptest.Env) {
	for _, c := range []struct {
		path string
		body any
	}{
		{"/v1/payment_intents", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}},
		{"/v1/terminals", map[string]any{"serial_number": "SN-abuse", "model": "countertop"}},
		{"/v1/webhook_endpoints", map[string]any{"url": "https://example.com/hook", "enabled_events": []string{"*"}}},
		{"/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 100000}},
		{"/v1/payouts", map[string]any{"amount_minor": 100, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000001"}},
		{"/v1/payouts/bulk", map[string]any{"currency": "DJF", "rows": []map[string]any{{"recipient_msisdn": "+25377000002", "amount": 10, "provider": "wallet_b", "reference": "r1"}}}},
	} {
		if r := e.Post(c.path, c.body); r.Status >= 300 {
			t.Fatalf("seed %s: %d %s", c.path, r.Status, r.Body)
		}
	}
}

// crawl follows every portal link from the dashboard of each mode, with ids
// as found, and returns the pages and the form actions seen.
func crawl(t *testing.T, p *apptest.Portal) (pages, forms []string) {
	seen := map[string]bool{}
	formSeen := map[string]bool{}
	queue := []string{"/portal/test/", "/portal/live/"}
	for len(queue) > 0 && len(pages) < 300 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		pg := p.Get(path)
		if pg.Status >= 500 {
			t.Errorf("GET %s: %d", path, pg.Status)
		}
		pages = append(pages, path)
		for _, m := range linkRE.FindAllStringSubmatch(pg.Body, -1) {
			link := html.UnescapeString(m[1])
			if u, err := url.Parse(link); err == nil && !seen[link] && !strings.Contains(u.Path, ".csv") {
				queue = append(queue, link)
			}
		}
		for _, m := range formRE.FindAllStringSubmatch(pg.Body, -1) {
			if a := html.UnescapeString(m[1]); !formSeen[a] {
				formSeen[a] = true
				forms = append(forms, a)
			}
		}
	}
	return pages, forms
}

func hostileForms(csrf string) []url.Values {
	fill := func(v string) url.Values {
		f := url.Values{"csrf_token": {csrf}}
		for _, k := range portalFields {
			f.Set(k, v)
		}
		return f
	}
	many := url.Values{"csrf_token": {csrf}}
	for i := 0; i < 2000; i++ {
		many.Set(fmt.Sprintf("f%d", i), "x")
	}
	return []url.Values{
		{"csrf_token": {csrf}},
		fill(strings.Repeat("x", 70<<10)),
		fill("\xff\xfe"),
		fill("a\x00b"),
		fill("99999999999999999999"),
		fill("-1"),
		fill("1e400"),
		fill("<script>alert(1)</script>\u202e"),
		many,
		fill(""),
		{"amount_minor": {"1"}}, // no token
	}
}

func portalSend(c *http.Client, base, method, path string, form url.Values) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return 400, nil // not a URL a client can send
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, nil
}
