package keyedload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Answer is one HTTP answer a client received.
type Answer struct {
	Status   int
	Body     []byte
	Replayed bool
}

// Code is the answer's error code, "" when it has none.
func (a Answer) Code() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(a.Body, &e)
	return e.Error.Code
}

// Attempt is one send of a request: when it left, when it was answered (or
// failed), and the status (0: no answer).
type Attempt struct {
	Sent, Done time.Time
	Status     int
}

// sent is an idempotent request as the client sends it, every time.
type sent struct {
	path string
	body []byte
}

// maxSamples is how many 5xx answers a client keeps for the log, of each
// kind (503, other).
const maxSamples = 5

// Client sends idempotent requests the way a careful merchant does: each
// with its key, retried with the same key on another process until it gets
// an answer that is not a failure of payd's (no connection, 5xx, 409 while
// the first run still holds the key).
type Client struct {
	T      *testing.T
	Fleet  *Fleet
	APIKey string
	HTTP   *http.Client
	// Patience bounds the retries of one request (90 s).
	Patience time.Duration
	// FiveBackoff is the pause before a request answered 5xx is sent again
	// (10 ms).
	FiveBackoff time.Duration
	// BeforeResend, when set, is called with a request's key before the
	// request is sent again after a send that got no answer (its process
	// was killed): a test holds the retry back with it, for example until
	// something else has settled what the dead process left.
	BeforeResend func(key string)

	mu       sync.Mutex
	requests map[string]sent
	answers  map[string][]Answer // every final answer, by Idempotency-Key
	attempts []Attempt
	fives    map[int]int // 5xx answers by status
	samples  []string    // the first 5xx answers, with who answered
	others   []string    // the first 5xx answers other than 503

	aborted atomic.Bool

	// Tries counts sends; Dropped those that got no answer (the process
	// died or was never up); Fives the 5xx answers; InUse the 409
	// idempotency_key_in_use answers; Replays the final answers replayed;
	// Answered the requests answered.
	Tries, Dropped, Fives, InUse, Replays, Answered atomic.Int64
}

// NewClient is a client of f sending with apiKey.
func NewClient(t *testing.T, f *Fleet, apiKey string) *Client {
	c := &Client{T: t, Fleet: f, APIKey: apiKey, Patience: 90 * time.Second, FiveBackoff: 10 * time.Millisecond,
		HTTP: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	c.Reset()
	return c
}

// Reset forgets what was sent so far (a set-up's requests).
func (c *Client) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests, c.answers, c.attempts = map[string]sent{}, map[string][]Answer{}, nil
	c.fives, c.samples, c.others = map[int]int{}, nil, nil
	for _, n := range []*atomic.Int64{&c.Tries, &c.Dropped, &c.Fives, &c.InUse, &c.Replays, &c.Answered} {
		n.Store(0)
	}
}

// Post sends one idempotent request until it is answered; ok is false when
// it never was (patience ran out, which fails the test).
func (c *Client) Post(key, path string, body any) (Answer, bool) {
	raw, _ := json.Marshal(body)
	c.mu.Lock()
	c.requests[key] = sent{path, raw}
	c.mu.Unlock()
	var last *Proc
	deadline := time.Now().Add(c.Patience)
	for time.Now().Before(deadline) {
		if c.aborted.Load() {
			return Answer{}, false
		}
		p := c.Fleet.Pick(last)
		if p == nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		last = p
		c.Tries.Add(1)
		at := Attempt{Sent: time.Now()}
		a, err := c.Once(p, key, path, raw)
		at.Done, at.Status = time.Now(), a.Status
		c.mu.Lock()
		c.attempts = append(c.attempts, at)
		if err == nil && a.Status >= 500 {
			c.fives[a.Status]++
			line := fmt.Sprintf("%s answered POST %s (key %s) at %s: %d %s", p.Name, path, key, at.Sent.Format("15:04:05.000"), a.Status, a.Body)
			if len(c.samples) < maxSamples {
				c.samples = append(c.samples, line)
			}
			if a.Status != http.StatusServiceUnavailable && len(c.others) < maxSamples {
				c.others = append(c.others, line)
			}
		}
		c.mu.Unlock()
		switch {
		case err != nil:
			c.Dropped.Add(1) // the process died (or was never up): another one
			time.Sleep(5 * time.Millisecond)
			if c.BeforeResend != nil {
				c.BeforeResend(key)
			}
			continue
		case a.Status >= 500:
			c.Fives.Add(1)
			time.Sleep(c.FiveBackoff)
			continue
		case a.Status == http.StatusConflict && a.Code() == "idempotency_key_in_use":
			c.InUse.Add(1)
			time.Sleep(25 * time.Millisecond)
			continue
		}
		if a.Replayed {
			c.Replays.Add(1)
		}
		c.mu.Lock()
		c.answers[key] = append(c.answers[key], a)
		c.mu.Unlock()
		c.Answered.Add(1)
		return a, true
	}
	c.T.Errorf("POST %s (key %s): no answer within %v", path, key, c.Patience)
	return Answer{}, false
}

// Abort makes every Post give up at once, unanswered and without failing the
// test: a test that has already failed ends its load so.
func (c *Client) Abort() { c.aborted.Store(true) }

// Once sends one request to p, without retrying.
func (c *Client) Once(p *Proc, key, path string, raw []byte) (Answer, error) {
	req, err := http.NewRequest("POST", p.URL+path, bytes.NewReader(raw))
	if err != nil {
		return Answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Status: resp.StatusCode, Body: b, Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}, nil
}

// Get reads a resource from any process that is up into v.
func (c *Client) Get(path string, v any) error {
	for deadline := time.Now().Add(c.Patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p := c.Fleet.Pick(nil)
		if p == nil {
			continue
		}
		req, _ := http.NewRequest("GET", p.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
		resp, err := c.HTTP.Do(req)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return json.Unmarshal(b, v)
	}
	return fmt.Errorf("GET %s: no process answered", path)
}

// Answers returns every final answer received so far, by key.
func (c *Client) Answers() map[string][]Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string][]Answer, len(c.answers))
	for k, v := range c.answers {
		m[k] = v
	}
	return m
}

// FirstWriteAfter is how long after at the first send that left after at
// was answered 2xx.
func (c *Client) FirstWriteAfter(at time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first time.Time
	for _, a := range c.attempts {
		if a.Status/100 == 2 && !a.Sent.Before(at) && (first.IsZero() || a.Done.Before(first)) {
			first = a.Done
		}
	}
	return first.Sub(at), !first.IsZero()
}

// FiveCounts returns the 503 answers, the other 5xx answers, and the first
// few of the others for the log.
func (c *Client) FiveCounts() (n503, other int, samples string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s, n := range c.fives {
		if s == http.StatusServiceUnavailable {
			n503 += n
		} else {
			other += n
		}
	}
	return n503, other, strings.Join(c.others, "\n")
}

// FiveAnswers returns the first 5xx answers, each followed by the log lines
// of every process about its request id (the cause of an internal error is
// logged there, never answered).
func (c *Client) FiveAnswers() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, s := range c.samples {
		b.WriteString("\n" + s + c.Fleet.LogLines(s))
	}
	return b.String()
}
