package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/payd/payd/internal/providers/protocol"
)

// callbackSchedule is the wait before each retry of a callback the merchant
// did not acknowledge with a 2xx: five attempts in all.
var callbackSchedule = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// outgoing is a callback to send: the event and where it goes.
type outgoing struct {
	ev  protocol.Event
	url string
}

// event makes the callback of a payment's or a payout's change.
func (s *Sim) event(typ string, p *payment, po *payout, now time.Time) *outgoing {
	o := &outgoing{ev: protocol.Event{ID: newID("pevt_"), Object: "event", Type: typ, CreatedAt: now}}
	if p != nil {
		v := p.Payment
		o.ev.Data.Payment, o.url = &v, p.callbackURL
	} else {
		v := po.Payout
		o.ev.Data.Payout, o.url = &v, po.callbackURL
	}
	return o
}

// refundEvent makes the callback of a refund's outcome.
func (s *Sim) refundEvent(typ string, rf *refund, now time.Time) *outgoing {
	v := rf.Refund
	return &outgoing{ev: protocol.Event{ID: newID("pevt_"), Object: "event", Type: typ, CreatedAt: now,
		Data: protocol.EventData{Refund: &v}}, url: rf.callbackURL}
}

// send posts o (nil: nothing) to its callback URL in the background,
// signed with the account's callback secret: late, twice, or not at all as
// configured, retried until acknowledged.
func (s *Sim) send(a *account, o *outgoing) {
	if o == nil || s.cfg.DropCallbacks {
		return
	}
	ev, target := &o.ev, o.url
	a.mu.Lock()
	secret := a.secret
	a.mu.Unlock()
	if secret == "" {
		s.log.Warn("callback not sent: no callback secret registered for this account", "provider", a.provider, "event_id", ev.ID, "type", ev.Type)
		return
	}
	body, _ := json.Marshal(ev)
	times := 1
	if s.cfg.DuplicateCallbacks {
		times = 2
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if s.cfg.LateCallbacks && !s.sleep(s.cfg.LateDelay) {
			return
		}
		for i := 0; i < times; i++ {
			s.deliver(target, secret, ev, body)
		}
	}()
}

// deliver posts one callback until the merchant answers 2xx or the
// schedule runs out.
func (s *Sim) deliver(target, secret string, ev *protocol.Event, body []byte) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			s.log.Warn("callback URL unusable", "event_id", ev.ID, "err", err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(protocol.HeaderEventID, ev.ID)
		req.Header.Set(protocol.HeaderEventType, ev.Type)
		req.Header.Set(protocol.HeaderSignature, protocol.Sign(secret, s.cfg.Now(), ev.ID, body))
		resp, err := s.cfg.CallbackClient.Do(req)
		status := 0
		if err == nil {
			status = resp.StatusCode
			resp.Body.Close()
			if status/100 == 2 {
				return
			}
		}
		if s.ctx.Err() != nil {
			return
		}
		if attempt >= len(callbackSchedule) {
			s.log.Warn("callback abandoned", "event_id", ev.ID, "type", ev.Type, "status", status, "err", err)
			return
		}
		if !s.sleep(callbackSchedule[attempt]) {
			return
		}
	}
}

// sleep waits d unless the simulator closes first (then it returns false).
func (s *Sim) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
