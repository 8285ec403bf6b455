// Command portal measures merchant-portal page latency over HTTP with a
// signed-in session: the dashboard, payment intent lists (first page, a deep
// cursor page, filters) and an intent's page, at a few client counts, with
// 100,000 payment intents in the database.
//
// It starts its own payd on a loopback port and seeds the intents:
//
//	go run ./bench/portal                        # SQLite in a temporary file
//	go run ./bench/portal -db postgres://...     # PostgreSQL (a fresh schema is made and dropped)
//	go run ./bench/portal -engine postgres       # the same, in $PAYD_TEST_DATABASE_URL
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
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app/apptest"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
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
		if err != nil {
			harness.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	levels, err := harness.Levels("clients", *clients)
	if err != nil {
		harness.Fatal(err)
	}
	ctx := context.Background()
	base := *target
	if base == "" {
		m, cleanup, err := db.Start(ctx)
		if err != nil {
			harness.Fatal(err)
		}
		defer cleanup()
		c, err := harness.NewMerchant(ctx, m, "Portal bench", "")
		if err != nil {
			harness.Fatal(err)
		}
		t := time.Now()
		if err := apptest.SeedPaymentIntents(ctx, m.DB, c.MerchantID, *n, m.DB.Now(), 90*24*time.Hour, 1000); err != nil {
			harness.Fatal(fmt.Errorf("seed: %w", err))
		}
		fmt.Printf("seeded %d payment intents over 90 days in %s\n", *n, time.Since(t).Round(time.Millisecond))
		base, *email, *password = m.URL(), c.Portal.Email, c.Portal.Password
	} else if err := harness.RequireLoopback(base); err != nil || *email == "" {
		harness.Fatal(fmt.Errorf("-url must be a loopback http URL and -email/-password are required (%v)", err))
	}
	c, err := signIn(base, *email, *password)
	if err != nil {
		harness.Fatal(fmt.Errorf("sign in: %w", err))
	}
	mid, err := middleIntent(c, base)
	if err != nil {
		harness.Fatal(err)
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
	fmt.Printf("engine=%s url=%s step=%s max=%d load=%s\n", db.Engine, base, *dur, *maxOps, harness.LoadAvg())
	for _, pg := range pages {
		fmt.Printf("\nGET %s\n", pg.name)
		for _, cl := range levels {
			// Every client shares the signed-in session (its cookie jar).
			res := loadgen.Run(cl, *dur, *maxOps, func(_ *http.Client, _ int64) error {
				resp, err := c.Get(base + pg.path)
				return loadgen.Check(resp, err, 200)
			})
			fmt.Printf("%s p95=%7.2fms\n", res, loadgen.MS(res.Latencies.Percentile(95)))
			res.WriteFailures(os.Stdout)
		}
	}
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
