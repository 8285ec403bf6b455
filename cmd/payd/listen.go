package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/webhook"
)

func init() {
	register(command{name: "listen", summary: "stream your events and forward each, signed, to a local URL (for building a receiver)", run: runListen})
	describe("listen", usage{
		synopsis: "--forward-to URL [--events t1,t2] [--secret whsec_... | --rotate-secret] [--retries 3]",
		about: "Reads the merchant's events from GET /v1/events/stream and posts each to the local URL exactly as a\n" +
			"webhook delivery (same headers, signed with the secret printed at start), printing one line per\n" +
			"delivery. The secret is this device's for the key's merchant and mode: made at the first run, kept in\n" +
			"the client's config file (PAYD_CONFIG) and the same at every run until --rotate-secret replaces it, so\n" +
			"a receiver configured once keeps verifying. --secret uses a secret of yours instead.\n" +
			"delivery. A forward that gets no answer, a 429 or a 5xx is retried --retries times with a doubling\n" +
			"wait (0.5 s, 1 s, 2 s, ...), one line per attempt; events keep their order. It reconnects with\n" +
			"Last-Event-ID when the stream drops.",
		vars: clientVars,
	})
}

// runListen is `payd listen --forward-to URL [--events t1,t2] [--secret whsec_...]`:
// it reads the merchant's events from GET /v1/events/stream (server from
// PAYD_URL, default http:// + PAYD_ADDR; key from PAYD_API_KEY) and posts each
// to the local URL exactly as a webhook delivery (same headers, signed with a
// secret it prints at start), printing one line per delivery. It reconnects
// with Last-Event-ID when the stream drops.
func runListen(ctx context.Context, e *env, args []string) error {
	fs := newFlags("listen")
	forward := fs.String("forward-to", "", "local URL to post each event to, e.g. http://localhost:4242/webhooks")
	types := fs.String("events", "", "comma-separated event types to forward (default: all)")
	secret := fs.String("secret", "", "signing secret to use (default: this device's secret for the key's merchant and mode, made at the first run and kept until --rotate-secret)")
	rotate := fs.Bool("rotate-secret", false, "replace this device's kept signing secret for the merchant and mode with a new one")
	retries := fs.Int("retries", 3, "times a failed forward (no answer, 429 or 5xx) is retried, waiting 0.5 s, 1 s, 2 s, ... (at most 10)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if *forward == "" || fs.NArg() > 0 {
		return badUsage(e, fs, "--forward-to is required")
	}
	if u, err := url.Parse(*forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to %q is not an http(s) URL", *forward)
	}
	api, err := newAPIClient(e)
	if err != nil {
		return err
	}
	if *retries < 0 || *retries > 10 {
		return badUsage(e, fs, "--retries is between 0 and 10")
	}
	if *secret == "" {
		if *secret, err = deviceSecret(ctx, e, api, *rotate); err != nil {
			return err
		}
	} else if *rotate {
		return badUsage(e, fs, "--rotate-secret makes the kept secret: it cannot be given with --secret")
	}
	l := &listener{out: e.stdout, errOut: e.stderr, base: api.base, key: api.key, forwardTo: *forward, secret: *secret, retries: *retries,
		types: strings.ReplaceAll(*types, " ", ""), seen: webhook.NewDedup(10000),
		stream:  &http.Client{}, // no timeout: the stream is long-lived
		forward: &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	return l.run(ctx)
}

type listener struct {
	out, errOut     io.Writer
	base, key       string
	forwardTo       string
	secret, types   string
	retries         int
	lastID          string
	seen            *webhook.Dedup
	stream, forward *http.Client
	readyOnce       sync.Once
}

// errFatal marks an answer that retrying cannot fix (a bad key, a bad filter).
type errFatal struct{ msg string }

func (e errFatal) Error() string { return e.msg }

func (l *listener) run(ctx context.Context) error {
	backoff := 500 * time.Millisecond
	for {
		err := l.connect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal errFatal
		if errors.As(err, &fatal) {
			return err
		}
		fmt.Fprintf(l.errOut, "payd listen: stream interrupted (%v); reconnecting in %s\n", err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// connect reads one stream connection until it ends.
func (l *listener) connect(ctx context.Context) error {
	q := url.Values{}
	if l.types != "" {
		q.Set("types", l.types)
	}
	u := l.base + "/v1/events/stream"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return errFatal{err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+l.key)
	req.Header.Set("Accept", "text/event-stream")
	if l.lastID != "" {
		req.Header.Set("Last-Event-ID", l.lastID)
	}
	resp, err := l.stream.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		json.Unmarshal(raw, &body)
		msg := fmt.Sprintf("the server answered %d: %s", resp.StatusCode, body.Error.Message)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return errFatal{msg}
		}
		return errors.New(msg)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, typ string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				l.deliver(ctx, id, typ, bytes.TrimSuffix(data.Bytes(), []byte("\n")))
			}
			id, typ = "", ""
			data.Reset()
		case strings.HasPrefix(line, ":"):
			l.readyOnce.Do(func() {
				fmt.Fprintf(l.out, "Ready! Forwarding events from %s to %s\nYour webhook signing secret is %s (^C to quit)\n", l.base, l.forwardTo, l.secret)
			})
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				id = value
			case "event":
				typ = value
			case "data":
				data.WriteString(value)
				data.WriteByte('\n')
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("the server closed the stream")
}

// deliver forwards one event like a webhook delivery, retrying a failed
// forward (no answer, 429 or 5xx) up to l.retries times with a doubling
// wait, and prints one line per attempt. Later events wait, so the receiver
// sees them in order.
func (l *listener) deliver(ctx context.Context, id, typ string, body []byte) {
	if id == "" {
		return
	}
	l.lastID = id
	if !l.seen.FirstTime(id) {
		return
	}
	wait := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		if !l.forwardOnce(ctx, id, typ, body, attempt) || attempt >= l.retries {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, 8*time.Second)
	}
}

// forwardOnce posts the event once, prints the outcome and reports whether
// it is worth retrying.
func (l *listener) forwardOnce(ctx context.Context, id, typ string, body []byte, attempt int) (retry bool) {
	start := time.Now()
	prefix := fmt.Sprintf("%s  %-34s %s  -->", start.UTC().Format(time.RFC3339), typ, id)
	if attempt > 0 {
		prefix += fmt.Sprintf(" (retry %d of %d)", attempt, l.retries)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forwardTo, bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(l.out, "%s %v\n", prefix, err)
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "payd-listen/1")
	req.Header.Set(webhook.HeaderEventID, id)
	req.Header.Set(webhook.HeaderEventType, typ)
	req.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader(l.secret, start, id, body))
	resp, err := l.forward.Do(req)
	ms := time.Since(start).Milliseconds()
	if err != nil {
		fmt.Fprintf(l.out, "%s POST %s failed: %v\n", prefix, l.forwardTo, err)
		return ctx.Err() == nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	fmt.Fprintf(l.out, "%s POST %s [%d] %d ms\n", prefix, l.forwardTo, resp.StatusCode, ms)
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
}

// deviceSecret is this device's signing secret for the key's merchant and
// mode, kept in the client's config file (PAYD_CONFIG) so a receiver keeps
// working across runs: made at the first run, replaced with rotate. When
// the file cannot be written, the secret is used for this run only, and
// the receiver must take it from the Ready line.
func deviceSecret(ctx context.Context, e *env, api *apiClient, rotate bool) (string, error) {
	raw, err := api.do(ctx, "GET", "/v1/account", nil)
	if err != nil {
		return "", err
	}
	var acct struct {
		ID       string `json:"id"`
		Livemode bool   `json:"livemode"`
	}
	if err := json.Unmarshal(raw, &acct); err != nil || acct.ID == "" {
		return "", fmt.Errorf("GET /v1/account: an answer that is not an account: %.200s", raw)
	}
	slot := acct.ID + "/" + modeName(acct.Livemode)
	path, err := configPath(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "payd listen: %v; the signing secret lasts this run only\n", err)
		return ids.Secret("whsec_", 32), nil
	}
	cfg, err := loadConfig(path)
	if err != nil {
		return "", err
	}
	if s := cfg.ListenSecrets[slot]; s != "" && !rotate {
		return s, nil
	}
	s := ids.Secret("whsec_", 32)
	if cfg.ListenSecrets == nil {
		cfg.ListenSecrets = map[string]string{}
	}
	cfg.ListenSecrets[slot] = s
	if err := cfg.save(path); err != nil {
		fmt.Fprintf(e.stderr, "payd listen: cannot keep the signing secret in %s (%v); it lasts this run only\n", path, err)
		return s, nil
	}
	if rotate {
		fmt.Fprintf(e.stderr, "payd listen: a new signing secret replaces the one kept for %s in %s mode\n", acct.ID, modeName(acct.Livemode))
	}
	return s, nil
}
