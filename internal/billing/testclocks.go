package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/jobs"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
)

// ClockParams is the body of POST /v1/test_helpers/test_clocks and of its
// advance.
type ClockParams struct {
	FrozenTime *int64  `json:"frozen_time"` // unix seconds
	Name       *string `json:"name"`
}

// Bounds of a test clock's time: from 2000 to 2100, and one advance moves
// it at most two years (a bound on the work one request can start).
var (
	minClock   = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxClock   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxAdvance = int64(2 * 366 * 24 * 3600)
)

func testModeOnly(p auth.Principal) error {
	if p.Livemode {
		return errs.Permission("permission_denied", "test clocks exist in test mode only; use a test key")
	}
	return nil
}

func checkFrozen(t *int64) error {
	if t == nil {
		return errs.Missing("frozen_time")
	}
	if *t < minClock || *t > maxClock {
		return errs.Invalid("frozen_time", "parameter_invalid", "frozen_time must be unix seconds between 2000-01-01 and 2100-01-01")
	}
	return nil
}

// CreateClock makes a test clock frozen at frozen_time, status ready.
func (s *Service) CreateClock(ctx context.Context, cl store.Claim, p auth.Principal, in ClockParams) (TestClock, error) {
	if err := testModeOnly(p); err != nil {
		return TestClock{}, err
	}
	if err := checkFrozen(in.FrozenTime); err != nil {
		return TestClock{}, err
	}
	if in.Name != nil && (!utf8.ValidString(*in.Name) || utf8.RuneCountInString(*in.Name) > maxName) {
		return TestClock{}, errs.Invalid("name", "parameter_invalid", "name is at most %d characters", maxName)
	}
	c := TestClock{ID: ids.New("clock_"), Object: "test_clock", Name: in.Name, FrozenTime: *in.FrozenTime, Status: ClockReady,
		MerchantID: p.MerchantID, Livemode: p.Livemode}
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c.CreatedAt = tx.Now().Truncate(time.Second)
		_, err := tx.Exec(ctx, `INSERT INTO test_clocks (id, merchant_id, livemode, name, frozen_time, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.MerchantID, c.Livemode, c.Name, store.Micros(c.clockTime()), string(c.Status),
			store.Micros(tx.Now()), store.Micros(tx.Now()))
		return err
	})
	return c, err
}

// GetClock returns one test clock.
func (s *Service) GetClock(ctx context.Context, p auth.Principal, id string) (TestClock, error) {
	if err := testModeOnly(p); err != nil {
		return TestClock{}, err
	}
	c, err := loadClock(ctx, s.db, p.MerchantID, p.Livemode, id)
	if err != nil {
		return TestClock{}, err
	}
	return *c, nil
}

// ListClocks returns the principal's test clocks, newest first.
func (s *Service) ListClocks(ctx context.Context, p auth.Principal, page pagination.Page) (pagination.List[TestClock], error) {
	if err := testModeOnly(p); err != nil {
		return pagination.List[TestClock]{}, err
	}
	return list(ctx, s.db, "SELECT "+clockColumns+" FROM test_clocks WHERE merchant_id = ? AND livemode = ?", []any{p.MerchantID, p.Livemode},
		page, scanClock)
}

// AdvanceJob is the job kind that runs a test clock's advance.
const AdvanceJob = "billing.advance"

type advancePayload struct {
	Clock   string `json:"clock"`
	Version int64  `json:"version"`
}

// AdvanceFanout is how many advance jobs one advance queues: on
// PostgreSQL several job runners (processes) then split its work; the
// compare-and-sets make them harmless to each other. One is enough on
// SQLite, which has one writer.
var AdvanceFanout = 2

// AdvanceClock moves a test clock to frozen_time and queues the run of
// every billing step due up to it; it answers the clock advancing. An
// advance to the clock's own time runs what is due now (a subscription's
// first attempt, say). Moving backwards is 400; a clock still advancing is
// 409.
func (s *Service) AdvanceClock(ctx context.Context, cl store.Claim, p auth.Principal, id string, in ClockParams) (TestClock, error) {
	if err := testModeOnly(p); err != nil {
		return TestClock{}, err
	}
	if err := checkFrozen(in.FrozenTime); err != nil {
		return TestClock{}, err
	}
	if in.Name != nil {
		return TestClock{}, errs.Invalid("name", "parameter_unknown", "an advance takes frozen_time only")
	}
	var out TestClock
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		c, err := loadClock(ctx, tx, p.MerchantID, p.Livemode, id)
		if err != nil {
			return err
		}
		switch {
		case c.Status == ClockAdvancing:
			return errs.InvalidState("test clock %s is still advancing; wait until it is ready", c.ID)
		case *in.FrozenTime < c.FrozenTime:
			return errs.Invalid("frozen_time", "parameter_invalid", "frozen_time %d is before the clock's time %d: a test clock only moves forward", *in.FrozenTime, c.FrozenTime)
		case *in.FrozenTime-c.FrozenTime > maxAdvance:
			return errs.Invalid("frozen_time", "parameter_invalid", "one advance moves a test clock at most two years")
		}
		c.FrozenTime, c.Status = *in.FrozenTime, ClockAdvancing
		res, err := tx.Exec(ctx, "UPDATE test_clocks SET frozen_time = ?, status = 'advancing', version = version + 1, updated_at = ? WHERE id = ? AND version = ? AND status = 'ready'",
			store.Micros(c.clockTime()), store.Micros(tx.Now()), c.ID, c.version)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.InvalidState("test clock %s changed while this request ran; retrieve it and try again", c.ID)
		}
		c.version++
		fanout := AdvanceFanout
		if !tx.Engine().ConcurrentWriters() {
			fanout = 1 // one writer: parallel steps only queue
		}
		for i := range fanout {
			key := fmt.Sprintf("%s:%s:%d:%d", AdvanceJob, c.ID, c.version, i)
			if err := jobs.Enqueue(ctx, tx, AdvanceJob, advancePayload{Clock: c.ID, Version: c.version}, tx.Now(), key); err != nil {
				return err
			}
		}
		tx.AfterCommit(s.wake)
		out = *c
		return nil
	})
	return out, err
}

// RunAdvanceJob handles AdvanceJob: it runs every step due on the clock up
// to its frozen time, then marks it ready. A crash mid-way leaves whole
// steps only; the job is claimed again when its lease expires, and the run
// makes what is left.
func (s *Service) RunAdvanceJob(ctx context.Context, job jobs.Job) error {
	var pl advancePayload
	if err := json.Unmarshal(job.Payload, &pl); err != nil || pl.Clock == "" {
		return fmt.Errorf("billing: advance job %s has a bad payload", job.ID)
	}
	return s.RunAdvance(ctx, pl.Clock)
}

// RunAdvance runs a test clock's pending advance to its end (the advance
// job's work; tests call it directly). A clock that is ready has nothing
// to do.
func (s *Service) RunAdvance(ctx context.Context, clockID string) error {
	c, err := scanClock(s.db.QueryRow(ctx, "SELECT "+clockColumns+" FROM test_clocks WHERE id = ?", clockID))
	if store.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Status != ClockAdvancing {
		return nil
	}
	if err := s.run(ctx, timeline{clock: &c.ID, until: c.clockTime()}); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		// Ready only once nothing is left, whoever else runs this advance:
		// another runner's uncommitted chunk still shows as due here.
		left, err := dueCount(ctx, tx, timeline{clock: &c.ID, until: c.clockTime()})
		if err != nil || left > 0 {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE test_clocks SET status = 'ready', updated_at = ? WHERE id = ? AND version = ? AND status = 'advancing'",
			store.Micros(tx.Now()), c.ID, c.version)
		return err
	})
}

// dueCount counts the steps still due on tl, claimed attempts in flight
// included.
func dueCount(ctx context.Context, q store.Querier, tl timeline) (int, error) {
	cs, a1 := tl.cond("s")
	ci, a2 := tl.cond("i")
	until := store.Micros(tl.until)
	var n1, n2 int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM subscriptions s WHERE "+cs+" AND s.status <> 'canceled' AND s.current_period_end <= ?",
		append(a1, until)...).Scan(&n1); err != nil {
		return 0, err
	}
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM invoices i WHERE "+ci+" AND i.status = 'open' AND (i.next_payment_attempt <= ? OR i.attempt_claimed_until IS NOT NULL)",
		append(a2, until)...).Scan(&n2); err != nil {
		return 0, err
	}
	return n1 + n2, nil
}

// ParseRetrySchedule reads PAYD_BILLING_RETRY_SCHEDULE: comma-separated
// waits such as "1d,3d,5d" (d is 24 hours; Go durations such as 12h or
// 90m work too).
func ParseRetrySchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		var d time.Duration
		if n, ok := cutDays(part); ok {
			if n < 0 || n > 3650 {
				return nil, fmt.Errorf("%q is not a wait of 0 to 3650 days", part)
			}
			d = time.Duration(n) * 24 * time.Hour
		} else {
			var err error
			if d, err = time.ParseDuration(part); err != nil || d < 0 {
				return nil, fmt.Errorf("%q is not a wait such as 1d or 12h", part)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

func cutDays(s string) (int, bool) {
	if len(s) < 2 || s[len(s)-1] != 'd' {
		return 0, false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	return n, err == nil
}
