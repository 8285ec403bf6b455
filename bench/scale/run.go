package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

// config is one run of the bench.
type config struct {
	cc        *harness.CostCurve
	merchants int
	maxDisk   int64     // bytes
	verify    int       // ledger.Verify at sizes up to this
	out       io.Writer // progress
	// check makes the run fail on any failed request and checks the
	// seeded rows at each size (checkSeeded).
	check bool
	chunk int   // rows per seeding statement; 0: the seeder's own
	shape shape // what of each payment's history is seeded
	// cpuProfile, when set, takes a CPU profile of the process during each
	// step whose name contains profileStep, written to cpuProfile with the
	// size and the client count appended.
	cpuProfile, profileStep string
}

// run starts payd, seeds it through cfg's sizes and measures at each.
func run(ctx context.Context, cfg config) (*report, error) {
	if cfg.merchants < 2 {
		return nil, fmt.Errorf("-merchants: at least 2 (one hot, the others sharing the rest)")
	}
	// The sink answers every webhook delivery 200 at once, as a healthy
	// merchant endpoint does.
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(sink)
	defer srv.Close()
	sinkURL := "http://localhost:" + strconv.Itoa(sink.Addr().(*net.TCPAddr).Port) + "/payd"

	m, cleanup, err := cfg.cc.DB.Start(ctx, harness.Configure(func(c *app.Config) {
		c.PublicRateLimit = 0
	}))
	if err != nil {
		return nil, err
	}
	defer cleanup()
	sms, hotKey, err := makeMerchants(ctx, m, cfg.merchants, sinkURL)
	if err != nil {
		return nil, err
	}
	if cfg.shape.name == "" {
		return nil, fmt.Errorf("no history shape")
	}
	s, err := newSeeder(ctx, m.DB, sms, cfg.cc.Sizes[len(cfg.cc.Sizes)-1], cfg.shape)
	if err != nil {
		return nil, err
	}
	if cfg.chunk > 0 {
		s.chunk = cfg.chunk
	}
	rep := &report{engine: cfg.cc.DB.Engine, header: cfg.cc.Header() + "; " + cfg.shape.String(), merchants: cfg.merchants, shape: cfg.shape.name}
	fmt.Fprintln(cfg.out, rep.header)
	api := harness.API{Base: m.URL(), Key: hotKey}
	var proj *projection // from the last size of 100,000 payments or more
	for _, n := range cfg.cc.Sizes {
		if n > s.done {
			if proj != nil && proj.bytes(s.shape, n) > float64(cfg.maxDisk) {
				rep.stopped = fmt.Sprintf("stopped before %d: %.1f GB projected (%.0f bytes per payment of the tables that only grow, plus the retained tables' %.1f GB) is past -max-disk %.1f GB",
					n, proj.bytes(s.shape, n)/1e9, proj.perPayment, (proj.bytes(s.shape, n)-proj.perPayment*float64(n))/1e9, float64(cfg.maxDisk)/1e9)
				fmt.Fprintln(cfg.out, rep.stopped)
				break
			}
			fmt.Fprintf(cfg.out, "seeding %d..%d (load %s)\n", s.done, n-1, harness.LoadAvg())
			t := time.Now()
			if err := s.seed(ctx, n, cfg.out); err != nil {
				return rep, fmt.Errorf("seed to %d: %w", n, err)
			}
			fmt.Fprintf(cfg.out, "seeded to %d in %s\n", n, time.Since(t).Round(time.Second))
			rep.seedSeconds = append(rep.seedSeconds, [2]float64{float64(n), time.Since(t).Seconds()})
		}
		if cfg.check {
			if err := checkSeeded(ctx, m.DB, s, n); err != nil {
				return rep, fmt.Errorf("check at %d: %w", n, err)
			}
		}
		sz := sizeResult{Size: n, Load: harness.LoadAvg()}
		if n <= cfg.verify {
			t := time.Now()
			if err := ledger.Verify(ctx, m.DB); err != nil {
				return rep, fmt.Errorf("ledger.Verify at %d: %w", n, err)
			}
			sz.Verified = true
			fmt.Fprintf(cfg.out, "ledger.Verify at %d passed in %s\n", n, time.Since(t).Round(time.Millisecond))
		}
		if err := measure(ctx, m, api, s, cfg, &sz); err != nil {
			return rep, err
		}
		if cfg.check {
			for _, st := range sz.Steps {
				if st.Requests == 0 || st.Errors > 0 {
					return rep, fmt.Errorf("check at %d: %s at %d clients: %d requests, %d failed", n, st.Name, st.Clients, st.Requests, st.Errors)
				}
			}
		}
		if sz.Bytes, err = databaseBytes(ctx, m.DB); err != nil {
			return rep, err
		}
		if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents").Scan(&sz.Payments); err != nil {
			return rep, err
		}
		p, retained, err := diskParts(ctx, m.DB, s.shape, sz.Bytes, sz.Payments, n)
		if err != nil {
			return rep, err
		}
		sz.RetainedBytes = retained
		if sz.Payments > 0 {
			sz.BytesPerPayment = float64(sz.Bytes) / float64(sz.Payments)
			sz.GrowingBytesPerPayment = p.perPayment
			if sz.Payments >= 100_000 {
				proj = &p
			}
		}
		rep.sizes = append(rep.sizes, sz)
		fmt.Fprintf(cfg.out, "size %d: %d payments, %d bytes, %.0f bytes per payment (%.0f of the tables that only grow; events, deliveries, attempts and keys %d bytes)\n",
			n, sz.Payments, sz.Bytes, sz.BytesPerPayment, sz.GrowingBytesPerPayment, sz.RetainedBytes)
	}
	return rep, nil
}

// makeMerchants makes n merchants, each with a webhook endpoint at sinkURL,
// and returns them as the seeder needs them with the first's secret key.
func makeMerchants(ctx context.Context, m *app.Main, n int, sinkURL string) ([]seedMerchant, string, error) {
	sms := make([]seedMerchant, n)
	var hotKey string
	for k := range sms {
		c, err := m.Merchants.Create(ctx, merchantParams(k))
		if err != nil {
			return nil, "", fmt.Errorf("merchant %d: %w", k, err)
		}
		if k == 0 {
			hotKey = c.SecretKeys[0]
		}
		sms[k].id = c.MerchantID
		if err := m.DB.QueryRow(ctx, `SELECT id FROM api_keys WHERE merchant_id = ? AND livemode = FALSE AND kind = 'secret' ORDER BY created_at, id LIMIT 1`,
			c.MerchantID).Scan(&sms[k].principal); err != nil {
			return nil, "", fmt.Errorf("merchant %d's key: %w", k, err)
		}
		ep, _, err := m.Webhooks().CreateEndpoint(ctx, webhooks.Owner{MerchantID: c.MerchantID}, webhooks.EndpointParams{URL: &sinkURL}, nil)
		if err != nil {
			return nil, "", fmt.Errorf("merchant %d's endpoint: %w", k, err)
		}
		sms[k].endpoint = ep.ID
	}
	return sms, hotKey, nil
}

// listLimit is the page size of the measured lists.
const listLimit = 10

// deepPage is the list page measured beside the first.
const deepPage = 1000

var createBody = []byte(`{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"scale bench"}`)

// measure runs every step at every concurrency level on the hot merchant:
// the writes first (they give the empty database rows to read), then the
// reads.
func measure(ctx context.Context, m *app.Main, api harness.API, s *seeder, cfg config, sz *sizeResult) error {
	tag := "scale-" + harness.RandomHex(4) + "-"
	create := func(a harness.API, key string) (string, error) {
		var out struct {
			ID string `json:"id"`
		}
		err := a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Body: createBody, IdempotencyKey: key, Want: 201}, &out)
		return out.ID, err
	}
	runN := func(name string, maxOps int64, op func(c *loadgen.Call) error) {
		for _, cl := range cfg.cc.Levels {
			// A fresh tag per step: a key of an earlier step would replay.
			tag = "scale-" + harness.RandomHex(4) + "-"
			stop, err := cfg.profile(name, sz.Size, cl)
			if err != nil {
				fmt.Fprintln(cfg.out, err)
			}
			res := loadgen.RunWith(loadgen.Options{Clients: cl, Duration: cfg.cc.Duration, MaxOps: maxOps}, op)
			stop()
			fmt.Fprintf(cfg.out, "  %-44s %s\n", name, res)
			res.WriteFailures(cfg.out)
			sz.Steps = append(sz.Steps, stepResult{Name: name, Clients: cl, Requests: res.Requests, Errors: res.Errors,
				PerSecond: res.Throughput(), P50: loadgen.MS(res.P50), P99: loadgen.MS(res.P99)})
		}
	}
	run := func(name string, op func(c *loadgen.Call) error) { runN(name, cfg.cc.Max, op) }
	fmt.Fprintf(cfg.out, "\n=== %d payment intents (load %s)\n", sz.Size, sz.Load)
	run("POST /v1/payment_intents (keyed)", func(c *loadgen.Call) error {
		_, err := create(api.With(c.HTTP), tag+"c-"+strconv.FormatInt(c.N, 10))
		return err
	})
	run("create+confirm pair", func(c *loadgen.Call) error {
		a := api.With(c.HTTP)
		id, err := create(a, tag+"p-"+strconv.FormatInt(c.N, 10))
		if err != nil {
			return err
		}
		var out struct {
			Status string `json:"status"`
		}
		if err := a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + url.PathEscape(id) + "/confirm", Body: `{"otp":"123456"}`}, &out); err != nil {
			return err
		}
		if out.Status != "succeeded" {
			return fmt.Errorf("confirm left %s", out.Status)
		}
		return nil
	})
	// The 1000th page is asked for as a client walking the list gets it:
	// starting_after the last row of the 999th page, whose id is read here
	// (the list is newest first by id). With fewer rows, the deepest there
	// is.
	var rows int
	if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM payment_intents WHERE merchant_id = ? AND livemode = FALSE", s.ms[0].id).Scan(&rows); err != nil {
		return err
	}
	off := min((deepPage-1)*listLimit-1, rows-1)
	var deepID string
	if err := m.DB.QueryRow(ctx, "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = FALSE ORDER BY id DESC LIMIT 1 OFFSET ?",
		s.ms[0].id, off).Scan(&deepID); err != nil {
		return fmt.Errorf("the deep page's cursor: %w", err)
	}
	sz.DeepPageAfter = off + 1
	// The settlement report is of the last whole day of the seeded history
	// (UTC), so that its day holds the same payments at every size that has
	// one (about 14,400 of the hot merchant's); with less history, today's,
	// which holds the bench's own payments. Its payments are written beside
	// it: the report's cost follows them.
	day := s.rowAt(s.done).UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	if s.done == 0 || day.Before(s.start) {
		day = time.Now().UTC().Truncate(24 * time.Hour)
	}
	sz.ReportDate = day.Format(time.DateOnly)
	if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM ledger_transactions WHERE merchant_id = ? AND livemode = FALSE AND kind = 'payment_succeeded' AND created_at >= ? AND created_at < ?",
		s.ms[0].id, store.Micros(day), store.Micros(day.AddDate(0, 0, 1))).Scan(&sz.ReportDayPayments); err != nil {
		return err
	}
	if cfg.cc.Explain {
		hot := s.ms[0].id
		for _, q := range []struct {
			name, sql string
			args      []any
		}{
			{"list, first page", "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? ORDER BY merchant_id DESC, livemode DESC, id DESC LIMIT 11", []any{hot, false}},
			{"list, page 1000", "SELECT id FROM payment_intents WHERE merchant_id = ? AND livemode = ? AND id < ? ORDER BY merchant_id DESC, livemode DESC, id DESC LIMIT 11", []any{hot, false, deepID}},
			{"settlement report's transactions", "SELECT id, kind, reference FROM ledger_transactions WHERE merchant_id = ? AND livemode = ? AND kind IN (?) AND created_at >= ? AND created_at < ?",
				[]any{hot, false, "payment_succeeded", store.Micros(day), store.Micros(day.AddDate(0, 0, 1))}},
		} {
			if err := harness.PrintPlan(ctx, m.DB, cfg.out, q.name, q.sql, q.args...); err != nil {
				return err
			}
		}
	}
	lim := strconv.Itoa(listLimit)
	// A step bounded by count (-max) makes a tenth as many settlement
	// reports as other reads: each reads a whole day of the hot merchant
	// (about 14,400 payments, a second of the machine or more), and twenty
	// give its p99 as well as two hundred would.
	reports := cfg.cc.Max
	if reports > 0 {
		reports = max(reports/10, 4)
	}
	for _, g := range []struct {
		name, path string
		max        int64
	}{
		{"GET /v1/payment_intents/{id}", "/v1/payment_intents/" + url.PathEscape(deepID), cfg.cc.Max},
		{"GET /v1/balance", "/v1/balance", cfg.cc.Max},
		{"GET /v1/payment_intents (first page)", "/v1/payment_intents?limit=" + lim, cfg.cc.Max},
		{fmt.Sprintf("GET /v1/payment_intents (page %d)", deepPage), "/v1/payment_intents?limit=" + lim + "&starting_after=" + url.QueryEscape(deepID), cfg.cc.Max},
		{"GET /v1/reports/settlement (a day)", "/v1/reports/settlement?date=" + sz.ReportDate, reports},
		{"GET /v1/balance_transactions (first page)", "/v1/balance_transactions?limit=" + lim, cfg.cc.Max},
	} {
		runN(g.name, g.max, func(c *loadgen.Call) error { return api.With(c.HTTP).Get(g.path, nil) })
	}
	return nil
}

// checkSeeded checks that the n seeded rows (all created before today, the
// bench's own after) are the history of n confirmed payments in the
// seeder's shape: every intent with a posting per succeeded one, half of
// them the hot merchant's, and for each payment inside the events' window
// (all of them when the history is whole) two events, inside the
// deliveries' window two deliveries with an attempt each, inside the keys'
// window two keys; none older than its window.
func checkSeeded(ctx context.Context, db *store.DB, s *seeder, n int) error {
	before := store.Micros(s.rowAt(n))
	// since is the start of a window of w rows: counted from there and
	// counted from the beginning, a table must hold the same.
	since := func(w int) int64 { return store.Micros(s.rowAt(n - kept(w, n))) }
	sh := s.shape
	type count struct {
		q    string
		args []any
		want int
	}
	cs := []count{
		{"SELECT COUNT(*) FROM payment_intents WHERE created_at < ?", nil, n},
		{"SELECT COUNT(*) FROM payment_intents WHERE created_at < ? AND status = 'succeeded'", nil, n - n/10},
		{"SELECT COUNT(*) FROM payment_intents WHERE created_at < ? AND merchant_id = '" + s.ms[0].id + "'", nil, n / 2},
		{"SELECT COUNT(*) FROM ledger_transactions WHERE created_at < ? AND kind = 'payment_succeeded'", nil, n - n/10},
		{"SELECT COUNT(*) FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.created_at < ? AND t.kind = 'payment_succeeded'", nil, 2 * (n - n/10)},
	}
	for _, c := range []struct {
		q string
		w int
	}{
		{"SELECT COUNT(*) FROM events WHERE created_at < ?", sh.events},
		{"SELECT COUNT(*) FROM webhook_deliveries WHERE created_at < ? AND status = 'succeeded'", sh.deliveries},
		{"SELECT COUNT(*) FROM webhook_attempts WHERE created_at < ? AND http_status = 200", sh.deliveries},
		{"SELECT COUNT(*) FROM idempotency_keys WHERE created_at < ? AND state = 'done'", sh.keys},
	} {
		want := 2 * kept(c.w, n)
		cs = append(cs, count{c.q, nil, want}, count{c.q + " AND created_at >= ?", []any{since(c.w)}, want})
	}
	for _, c := range cs {
		var got int
		if err := db.QueryRow(ctx, c.q, append([]any{before}, c.args...)...).Scan(&got); err != nil {
			return err
		}
		if got != c.want {
			return fmt.Errorf("%s %v: %d, want %d", c.q, c.args, got, c.want)
		}
	}
	return nil
}

// profile starts a CPU profile of the step when -cpuprofile asks for it and
// returns what stops it.
func (cfg config) profile(step string, size, clients int) (func(), error) {
	if cfg.cpuProfile == "" || !strings.Contains(step, cfg.profileStep) {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s.%d.c%d", cfg.cpuProfile, size, clients))
	if err != nil {
		return func() {}, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
