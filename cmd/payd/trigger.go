package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/payd/payd/internal/ids"
)

func init() {
	register(command{name: "trigger", summary: "run the test-mode flow that emits an event type (or send a fixture of it)", run: runTrigger})
	describe("trigger", usage{
		synopsis: "[--fixture] [--related-object ID] [--wait 20s] EVENT_TYPE",
		about: "Runs, with your test key, the API calls that make payd emit EVENT_TYPE for real (as a merchant's\n" +
			"integration would: payment_intent.succeeded creates an intent and confirms it with the sandbox code,\n" +
			"refund.succeeded also refunds it, payout.failed sends a payout the sandbox refuses, dispute.created pays\n" +
			"on the hosted card page and disputes it, ...), prints each object it made on stderr, then waits for the\n" +
			"event about that object and prints it. The event reaches your endpoints and `payd listen` like any.\n" +
			"Event types no flow makes (invoice.*, transfer.*, ...), or any with --fixture, are a synthetic fixture\n" +
			"of the right shape sent through POST /v1/sandbox/webhooks/trigger. `payd trigger --list` names the\n" +
			"flows. Test-mode keys only.",
		vars: clientVars,
	})
}

// flow is the API calls that make payd emit one event type for real. It
// returns the id of the object the event is about.
type flow struct {
	about string // what it does, for --list
	run   func(ctx context.Context, c *apiClient, say func(string, ...any)) (objectID string, err error)
}

// flows maps each event type a test-mode flow can make to that flow.
var flows = map[string]flow{
	"payment_intent.created": {"create a bank_a intent (1500 DJF)", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		pi, err := createIntent(ctx, c, say, nil)
		return pi.ID, err
	}},
	"payment_intent.succeeded": {"create a bank_a intent and confirm it with the sandbox code", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		pi, err := paidIntent(ctx, c, say)
		return pi.ID, err
	}},
	"payment_intent.canceled": {"create a bank_a intent and cancel it", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		pi, err := createIntent(ctx, c, say, nil)
		if err != nil {
			return "", err
		}
		return pi.ID, c.step(ctx, say, "POST", "/v1/payment_intents/"+pi.ID+"/cancel", map[string]any{}, "", nil, nil)
	}},
	"payment_intent.amount_capturable_updated": {"authorise a card intent with manual capture on the hosted card page", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		pi, err := cardIntent(ctx, c, say, "manual")
		return pi.ID, err
	}},
	"refund.created":   {"pay an intent, then refund 500 DJF of it", refundFlow},
	"refund.succeeded": {"pay an intent, then refund 500 DJF of it", refundFlow},
	"payout.created": {"send 1000 DJF to a wallet_a number", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		return payout(ctx, c, say, "")
	}},
	"payout.succeeded": {"send 1000 DJF to a wallet_a number", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		return payout(ctx, c, say, "")
	}},
	"payout.failed": {"send a payout the sandbox refuses (scenario insufficient_funds)", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		return payout(ctx, c, say, "insufficient_funds")
	}},
	"payout.held": {"send a payout the rail holds for compliance (scenario kyc_blocked)", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		return payout(ctx, c, say, "kyc_blocked")
	}},
	"dispute.created": {"pay on the hosted card page, then dispute the payment (POST /v1/sandbox/disputes)", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		pi, err := cardIntent(ctx, c, say, "")
		if err != nil {
			return "", err
		}
		var d struct{ ID string }
		err = c.step(ctx, say, "POST", "/v1/sandbox/disputes", map[string]any{"payment_intent": pi.ID, "reason": "fraudulent"}, "", nil, &d)
		return d.ID, err
	}},
	"customer.created": {"create a customer", func(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
		var cu struct{ ID string }
		err := c.step(ctx, say, "POST", "/v1/customers", map[string]any{"name": "Trigger Customer", "email": "trigger@example.com"}, ids.Secret("trigger_", 8), nil, &cu)
		return cu.ID, err
	}},
}

// intent is the part of a payment intent the flows read.
type intent struct {
	ID         string
	Status     string
	NextAction *struct {
		Type        string `json:"type"`
		RedirectURL string `json:"redirect_url"`
	} `json:"next_action"`
}

func createIntent(ctx context.Context, c *apiClient, say func(string, ...any), extra map[string]any) (intent, error) {
	body := map[string]any{"amount_minor": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+25377123456",
		"description": "payd trigger", "metadata": map[string]string{"payd_trigger": "true"}}
	for k, v := range extra {
		body[k] = v
	}
	var pi intent
	err := c.step(ctx, say, "POST", "/v1/payment_intents", body, ids.Secret("trigger_", 8), nil, &pi)
	return pi, err
}

func paidIntent(ctx context.Context, c *apiClient, say func(string, ...any)) (intent, error) {
	pi, err := createIntent(ctx, c, say, nil)
	if err != nil {
		return pi, err
	}
	err = c.step(ctx, say, "POST", "/v1/payment_intents/"+pi.ID+"/confirm", map[string]any{"otp": "123456"}, "", nil, &pi)
	return pi, err
}

// cardIntent creates a wallet_a card intent and pays it on its hosted card
// page with the sandbox's succeeding card number, as a customer's browser
// would.
func cardIntent(ctx context.Context, c *apiClient, say func(string, ...any), captureMethod string) (intent, error) {
	body := map[string]any{"amount_minor": 1500, "currency": "DJF", "provider": "wallet_a", "description": "payd trigger",
		"return_url": "https://example.com/payd-trigger/return", "metadata": map[string]string{"wallet_a_mode": "card", "payd_trigger": "true"}}
	if captureMethod != "" {
		body["capture_method"] = captureMethod
	}
	var pi intent
	if err := c.step(ctx, say, "POST", "/v1/payment_intents", body, ids.Secret("trigger_", 8), nil, &pi); err != nil {
		return pi, err
	}
	if pi.NextAction == nil || pi.NextAction.RedirectURL == "" {
		return pi, fmt.Errorf("payment intent %s has no hosted card page (status %s)", pi.ID, pi.Status)
	}
	form := url.Values{"card_number": {"4242424242424242"}, "exp_month": {"12"},
		"exp_year": {fmt.Sprint(time.Now().Year() + 3)}, "cvc": {"123"}}
	req, err := http.NewRequestWithContext(ctx, "POST", pi.NextAction.RedirectURL, strings.NewReader(form.Encode()))
	if err != nil {
		return pi, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return pi, fmt.Errorf("the hosted card page: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return pi, fmt.Errorf("the hosted card page answered %d", resp.StatusCode)
	}
	say("paid %s on its hosted card page with the sandbox card 4242 4242 4242 4242", pi.ID)
	return pi, nil
}

func refundFlow(ctx context.Context, c *apiClient, say func(string, ...any)) (string, error) {
	pi, err := paidIntent(ctx, c, say)
	if err != nil {
		return "", err
	}
	var re struct{ ID string }
	err = c.step(ctx, say, "POST", "/v1/refunds", map[string]any{"payment_intent": pi.ID, "amount_minor": 500, "reason": "requested_by_customer"}, ids.Secret("trigger_", 8), nil, &re)
	return re.ID, err
}

// payout tops the test balance up by 1000 DJF (POST /v1/sandbox/topups), so
// the flow never fails for want of funds, then sends them to a wallet_a
// number.
func payout(ctx context.Context, c *apiClient, say func(string, ...any), scenario string) (string, error) {
	if err := c.step(ctx, say, "POST", "/v1/sandbox/topups", map[string]any{"amount_minor": 1000, "currency": "DJF"}, ids.Secret("trigger_", 8), nil, nil); err != nil {
		return "", err
	}
	say("topped the test balance up by 1000 DJF")
	var hdr map[string]string
	if scenario != "" {
		hdr = map[string]string{"X-Service-Scenario": scenario}
	}
	var po struct{ ID string }
	err := c.step(ctx, say, "POST", "/v1/payouts", map[string]any{"amount_minor": 1000, "currency": "DJF", "provider": "wallet_a",
		"recipient_msisdn": "+25377654321", "recipient_name": "Amina Hassan", "reference": ids.Secret("trigger_", 8)}, ids.Secret("trigger_", 8), hdr, &po)
	return po.ID, err
}

// step sends one API call of a flow, says what it made, and decodes the
// answer into into (when not nil).
func (c *apiClient) step(ctx context.Context, say func(string, ...any), method, path string, body any, key string, hdr map[string]string, into any) error {
	raw, err := c.send(ctx, method, path, body, key, hdr)
	if err != nil {
		return err
	}
	var obj struct{ ID, Object, Status string }
	json.Unmarshal(raw, &obj)
	if obj.ID != "" {
		say("%s %s: %s %s %s", method, path, obj.Object, obj.ID, obj.Status)
	}
	if into != nil {
		return json.Unmarshal(raw, into)
	}
	return nil
}

// runTrigger is `payd trigger EVENT_TYPE`: the event's flow, then the event.
func runTrigger(ctx context.Context, e *env, args []string) error {
	fs := newFlags("trigger")
	related := fs.String("related-object", "", "with a fixture: id of an object of yours the event should name (default: a made-up one)")
	fixture := fs.Bool("fixture", false, "send a synthetic fixture of the event type instead of running its flow")
	list := fs.Bool("list", false, "print the event types a flow makes, and what each flow does")
	wait := fs.Duration("wait", 20*time.Second, "how long to wait for the flow's event (1s to 5m)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if *list {
		types := make([]string, 0, len(flows))
		for t := range flows {
			types = append(types, t)
		}
		sort.Strings(types)
		for _, t := range types {
			fmt.Fprintf(e.stdout, "%-42s %s\n", t, flows[t].about)
		}
		return nil
	}
	if fs.NArg() != 1 {
		return badUsage(e, fs, "one EVENT_TYPE is required")
	}
	if *wait < time.Second || *wait > 5*time.Minute {
		return badUsage(e, fs, "--wait is between 1s and 5m")
	}
	c, err := newAPIClient(e)
	if err != nil {
		return err
	}
	// The flows move money: ask the server which mode the key is in rather
	// than trusting its prefix.
	raw, err := c.do(ctx, "GET", "/v1/account", nil)
	if err != nil {
		return err
	}
	var acct struct {
		Livemode bool `json:"livemode"`
	}
	if err := json.Unmarshal(raw, &acct); err != nil {
		return fmt.Errorf("GET /v1/account: %w", err)
	}
	if acct.Livemode {
		return errors.New("payd trigger runs with a test-mode key only (sk_test_...): this key is a live one")
	}
	typ := fs.Arg(0)
	f, ok := flows[typ]
	if *fixture || *related != "" || !ok {
		body := map[string]any{"event_type": typ}
		if *related != "" {
			body["related_object_id"] = *related
		}
		raw, err := c.do(ctx, "POST", "/v1/sandbox/webhooks/trigger", body)
		if err != nil {
			return err
		}
		printJSON(e.stdout, raw)
		fmt.Fprintln(e.stderr, "fixture event sent: your endpoints and `payd listen` receive it as a delivery")
		return nil
	}
	say := func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) }
	id, err := f.run(ctx, c, say)
	if err != nil {
		return fmt.Errorf("the %s flow: %w", typ, err)
	}
	raw, err = c.awaitEvent(ctx, typ, id, *wait)
	if err != nil {
		return err
	}
	printJSON(e.stdout, raw)
	fmt.Fprintln(e.stderr, "event emitted by the flow: your endpoints and `payd listen` receive it as a delivery")
	return nil
}

// awaitEvent polls GET /v1/events for the first event of type typ about the
// object id, for at most wait.
func (c *apiClient) awaitEvent(ctx context.Context, typ, id string, wait time.Duration) ([]byte, error) {
	deadline := time.Now().Add(wait)
	q := url.Values{"type": {typ}, "related_object_id": {id}, "limit": {"1"}}
	for {
		raw, err := c.do(ctx, "GET", "/v1/events?"+q.Encode(), nil)
		if err != nil {
			return nil, err
		}
		var page struct{ Data []json.RawMessage }
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("GET /v1/events: %w", err)
		}
		if len(page.Data) > 0 {
			return page.Data[0], nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the flow ran, but no %s event about %s came within %s (GET /v1/events?related_object_id=%s shows what it emitted)", typ, id, wait, id)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
