package keyedload

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// Workload is how many of each operation a run makes: intents are created
// then confirmed (two keyed requests each), payouts created (one).
type Workload struct {
	Intents, Payouts int
	// Live: payment intents on a live rail (push approval, no confirm).
	Live     bool
	Provider string
	// Prefix begins every key (and description) of the run, so that
	// several runs on one database keep apart.
	Prefix string
}

// Requests is how many keyed requests the workload sends.
func (w Workload) Requests() int {
	if w.Live {
		return w.Intents
	}
	return 2*w.Intents + w.Payouts
}

// Result is what a run created, by the key that created it.
type Result struct {
	mu      sync.Mutex
	Intents map[string]string // create key → intent id
	Payouts map[string]string // create key → payout id
	Acked   int               // requests answered 2xx as expected
}

// Drive runs the workload with clients concurrent senders. Each intent's
// and payout's description is its create key.
//
// When hold is not nil, the last 1/heldPart of the workload is sent only
// once hold is closed (a disturbance that must meet a run still going:
// after its last kill, once the primary is gone), so a fast run cannot end
// before it.
func Drive(t *testing.T, c *Client, w Workload, clients int, hold <-chan struct{}, heldPart int) *Result {
	res := &Result{Intents: map[string]string{}, Payouts: map[string]string{}}
	type op struct {
		payout bool
		i      int
	}
	ops := make(chan op)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range ops {
				if o.payout {
					key := fmt.Sprintf("%spayout-%d", w.Prefix, o.i)
					a, ok := c.Post(key, "/v1/payouts", map[string]any{"amount": 100 + o.i%37, "currency": "DJF",
						"provider": "wallet_b", "recipient_msisdn": "+25377123456", "description": key})
					res.record(t, "payout", key, a, ok, res.Payouts)
					continue
				}
				key := fmt.Sprintf("%spi-%d", w.Prefix, o.i)
				body := map[string]any{"amount": 500 + o.i%91, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456",
					"description": key}
				if w.Live {
					body["provider"], body["customer_msisdn"] = w.Provider, "+25377123123"
				}
				a, ok := c.Post(key, "/v1/payment_intents", body)
				id := res.record(t, "intent", key, a, ok, res.Intents)
				if id == "" || w.Live {
					continue
				}
				a, ok = c.Post("confirm-"+key, "/v1/payment_intents/"+id+"/confirm", map[string]string{"otp": "123456"})
				if !ok {
					continue
				}
				var pi struct{ Status string }
				if json.Unmarshal(a.Body, &pi); a.Status != 200 || pi.Status != "succeeded" {
					t.Errorf("confirm %s: %d %s", key, a.Status, a.Body)
					continue
				}
				res.mu.Lock()
				res.Acked++
				res.mu.Unlock()
			}
		}()
	}
	// Interleave the two kinds so disturbances land on both.
	n := max(w.Intents, w.Payouts)
	for i := 0; i < n; i++ {
		if hold != nil && heldPart > 0 && i == n-n/heldPart {
			<-hold
		}
		if i < w.Intents {
			ops <- op{i: i}
		}
		if i < w.Payouts && !w.Live {
			ops <- op{payout: true, i: i}
		}
	}
	close(ops)
	wg.Wait()
	return res
}

// record notes a create's answer: the created object's id under its key
// (none when it was not answered 201 with an id, which fails the test).
func (r *Result) record(t *testing.T, what, key string, a Answer, ok bool, into map[string]string) string {
	if !ok {
		return ""
	}
	var obj struct{ ID string }
	if json.Unmarshal(a.Body, &obj); a.Status != 201 || obj.ID == "" {
		t.Errorf("%s %s: %d %s", what, key, a.Status, a.Body)
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	into[key] = obj.ID
	r.Acked++
	return obj.ID
}

// Created is how many keys of the run answered with an object (intents and
// payouts).
func (r *Result) Created() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Intents) + len(r.Payouts)
}

// Add puts o's keys and acknowledgements into r (runs with distinct
// prefixes, checked together).
func (r *Result) Add(o *Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range o.Intents {
		r.Intents[k] = v
	}
	for k, v := range o.Payouts {
		r.Payouts[k] = v
	}
	r.Acked += o.Acked
}
