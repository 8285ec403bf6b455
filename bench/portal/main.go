// Command portal measures merchant-portal page latency over HTTP with a
// signed-in session: the dashboard, payment intent lists (first page, a deep
// cursor page, filters) and an intent's page, at a few client counts, with
// 100,000 payment intents in the database.
//
// It starts its own payd on a loopback port and seeds the intents:
//
//	go run ./bench/portal -engine sqlite
//	go run ./bench/portal -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_bench?sslmode=disable'
//
// or drives a running payd on loopback with a portal login (no seeding):
//
//	go run ./bench/portal -url http://127.0.0.1:8080 -email admin@... -password ...
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres (when payd is started here)")
	dbURL := flag.String("database-url", "", "database URL (postgres: an empty database you can drop)")
	target := flag.String("url", "", "drive a running payd at this loopback URL instead of starting one")
	email := flag.String("email", "", "with -url: portal email")
	password := flag.String("password", "", "with -url: portal password")
	n := flag.Int("intents", 100_000, "payment intents to seed (when payd is started here)")
	dur := flag.Duration("duration", 3*time.Second, "duration of each step")
	maxOps := flag.Int64("max", 2000, "at most this many page loads per step")
	clients := flag.String("clients", "1,4", "concurrency levels")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}

	base := *target
	if base == "" {
		m, login, err := start(*engine, *dbURL, *n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer m.Close()
		base, *email, *password = m.URL(), login.Email, login.Password
	} else if err := loopbackOnly(base); err != nil || *email == "" {
		fmt.Fprintln(os.Stderr, "-url must be a loopback http URL and -email/-password are required:", err)
		os.Exit(2)
	}
	c, err := signIn(base, *email, *password)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sign in:", err)
		os.Exit(1)
	}
	mid, err := middleIntent(c, base)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	day := time.Now().UTC().AddDate(0, 0, -30).Format("2006-01-02")
	pages := []struct{ name, path string }{
		{"dashboard", "/portal/test/"},
		{"payment intents, first page", "/portal/test/payment_intents"},
		{"payment intents, deep cursor", "/portal/test/payment_intents?starting_after=" + mid},
		{"payment intents, status+provider", "/portal/test/payment_intents?status=canceled&provider=wallet_a"},
		{"payment intents, one day", "/portal/test/payment_intents?from=" + day + "&to=" + day},
		{"one payment intent", "/portal/test/payment_intents/" + mid},
	}
	var levels []int
	for _, s := range strings.Split(*clients, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && v > 0 {
			levels = append(levels, v)
		}
	}
	fmt.Printf("engine=%s url=%s step=%s max=%d\n", *engine, base, *dur, *maxOps)
	for _, pg := range pages {
		fmt.Printf("\nGET %s\n", pg.name)
		for _, cl := range levels {
			var mu sync.Mutex
			var lat []time.Duration
			res := loadgen.Run(cl, *dur, *maxOps, func(_ *http.Client, _ int64) error {
				t := time.Now()
				resp, err := c.Get(base + pg.path)
				err = loadgen.Check(resp, err, 200)
				mu.Lock()
				lat = append(lat, time.Since(t))
				mu.Unlock()
				return err
			})
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			p95 := time.Duration(0)
			if len(lat) > 0 {
				p95 = lat[min(len(lat)-1, len(lat)*95/100)]
			}
			fmt.Printf("%s p95=%7.2fms\n", res, float64(p95.Microseconds())/1000)
		}
	}
}

// start runs payd on a fresh database with one merchant and n seeded
// intents; it returns the merchant's portal login.
func start(engine, dbURL string, n int) (*app.Main, merchants.PortalLogin, error) {
	var none merchants.PortalLogin
	if engine == "sqlite" && dbURL == "" {
		dir, err := os.MkdirTemp("", "payd-bench-portal")
		if err != nil {
			return nil, none, err
		}
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
	}
	if dbURL == "" {
		return nil, none, fmt.Errorf("-database-url is required for postgres")
	}
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return nil, none, err
	}
	cfg.Addr, cfg.PublicURL, cfg.DatabaseURL, cfg.RateLimit = "127.0.0.1:0", "", dbURL, 0
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	ctx := context.Background()
	if err := m.Run(ctx); err != nil {
		return nil, none, err
	}
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Portal bench"})
	if err != nil {
		m.Close()
		return nil, none, err
	}
	t := time.Now()
	if err := apptest.SeedPaymentIntents(ctx, m.DB, c.MerchantID, n, m.DB.Now(), 90*24*time.Hour, 1000); err != nil {
		m.Close()
		return nil, none, fmt.Errorf("seed (use an empty database): %w", err)
	}
	fmt.Printf("seeded %d payment intents over 90 days in %s\n", n, time.Since(t).Round(time.Millisecond))
	return m, c.Portal, nil
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

// signIn logs in through the form and returns a client holding the session.
func signIn(base, email, password string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		Transport:     &http.Transport{MaxIdleConnsPerHost: 64},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/portal/login")
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfRE.FindSubmatch(body)
	if m == nil {
		return nil, fmt.Errorf("no csrf_token on the login page")
	}
	resp, err = c.PostForm(base+"/portal/login", url.Values{"email": {email}, "password": {password}, "csrf_token": {string(m[1])}})
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("login answered %d", resp.StatusCode)
	}
	return c, nil
}

var intentRE = regexp.MustCompile(`/payment_intents/(pi_[0-9A-Z]+)"`)

// middleIntent walks 40 pages down the list by cursor and returns the id
// found there, for the deep-cursor and detail steps.
func middleIntent(c *http.Client, base string) (string, error) {
	path := "/portal/test/payment_intents?limit=100"
	var last string
	for i := 0; i < 40; i++ {
		resp, err := c.Get(base + path)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ids := intentRE.FindAllSubmatch(body, -1)
		if len(ids) == 0 {
			break
		}
		last = string(ids[len(ids)-1][1])
		path = "/portal/test/payment_intents?limit=100&starting_after=" + last
	}
	if last == "" {
		return "", fmt.Errorf("no payment intents listed")
	}
	return last, nil
}

func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("scheme %q", u.Scheme)
	}
	switch h := u.Hostname(); h {
	case "127.0.0.1", "localhost", "::1":
		return nil
	default:
		return fmt.Errorf("host %q is not loopback", h)
	}
}
