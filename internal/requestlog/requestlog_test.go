package requestlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func entry(merchant string, live bool, i int, at time.Time) Entry {
	return Entry{MerchantID: merchant, Livemode: live, PrincipalID: "key_a", Method: "POST",
		Path: fmt.Sprintf("/v1/payouts/po_%d", i), Status: 200 + i%3, RequestID: fmt.Sprintf("req_%d", i),
		Latency: time.Duration(i) * time.Millisecond, At: at}
}

func list(t *testing.T, l *Log, merchant string, live bool, keyID string, page pagination.Page) []Request {
	t.Helper()
	got, err := l.List(context.Background(), merchant, live, keyID, page)
	if err != nil {
		t.Fatal(err)
	}
	return got.Data
}

// TestFlushListAndIsolation writes requests of two merchants in two modes and
// reads each scope back newest first, with its fields, and nothing of another.
func TestFlushListAndIsolation(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := New(db, Config{})
		now := db.Now()
		for i := 0; i < 5; i++ {
			l.Record(entry("mer_a", false, i, now))
			l.Record(entry("mer_b", false, 100+i, now))
		}
		l.Record(entry("mer_a", true, 50, now))
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		a := list(t, l, "mer_a", false, "", pagination.Page{Limit: 100})
		if len(a) != 5 {
			t.Fatalf("mer_a test mode: %d requests, want 5", len(a))
		}
		for i, r := range a {
			want := 4 - i // newest first
			if r.Path != fmt.Sprintf("/v1/payouts/po_%d", want) || r.RequestID != fmt.Sprintf("req_%d", want) ||
				r.Status != 200+want%3 || r.LatencyMS != float64(want) || r.KeyID != "key_a" || r.Livemode || r.Object != "request_log" {
				t.Fatalf("row %d: %+v", i, r)
			}
		}
		if live := list(t, l, "mer_a", true, "", pagination.Page{Limit: 100}); len(live) != 1 || live[0].RequestID != "req_50" {
			t.Fatalf("mer_a live mode: %+v", live)
		}
		if b := list(t, l, "mer_b", false, "", pagination.Page{Limit: 100}); len(b) != 5 || b[0].RequestID != "req_104" {
			t.Fatalf("mer_b: %+v", b)
		}
		if none := list(t, l, "mer_a", false, "key_other", pagination.Page{Limit: 100}); len(none) != 0 {
			t.Fatalf("key filter: %+v", none)
		}
		// Cursors: two pages of 3 and 2.
		p1, err := l.List(ctx, "mer_a", false, "", pagination.Page{Limit: 3})
		if err != nil || len(p1.Data) != 3 || !p1.HasMore {
			t.Fatalf("page 1: %+v %v", p1, err)
		}
		p2 := list(t, l, "mer_a", false, "", pagination.Page{Limit: 3, StartingAfter: p1.Data[2].ID})
		if len(p2) != 2 || p2[0].RequestID != "req_1" {
			t.Fatalf("page 2: %+v", p2)
		}
		newer := list(t, l, "mer_a", false, "", pagination.Page{Limit: 10, EndingBefore: p1.Data[1].ID})
		if len(newer) != 1 || newer[0].RequestID != "req_4" {
			t.Fatalf("ending_before: %+v", newer)
		}
	})
}

// TestRetention keeps the newest Keep per merchant and mode (the age
// horizon is the retention job's: internal/retention).
func TestRetention(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := New(db, Config{Keep: 4})
		now := db.Now()
		for i := 0; i < 10; i++ {
			l.Record(entry("mer_a", false, i, now))
		}
		l.Record(entry("mer_b", false, 99, now))
		if err := l.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := list(t, l, "mer_a", false, "", pagination.Page{Limit: 100})
		if len(got) != 4 || got[0].RequestID != "req_9" || got[3].RequestID != "req_6" {
			t.Fatalf("after count pruning: %+v", got)
		}
		if b := list(t, l, "mer_b", false, "", pagination.Page{Limit: 100}); len(b) != 1 {
			t.Fatalf("mer_b: %+v", b)
		}
	})
}

// TestRecordNeverBlocks fills the buffer: Record drops and counts instead of
// waiting, and never touches the database.
func TestRecordNeverBlocks(t *testing.T) {
	l := New(nil, Config{Buffer: 3})
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			l.Record(entry("mer_a", false, i, time.Now()))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record blocked on a full buffer")
	}
	if l.Dropped() != 7 || len(l.in) != 3 {
		t.Fatalf("dropped %d, queued %d; want 7 and 3", l.Dropped(), len(l.in))
	}
}

// TestRunFlushesOnStop checks that stopping Run writes what is queued.
func TestRunFlushesOnStop(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		l := New(db, Config{Interval: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Run(ctx); close(done) }()
		for i := 0; i < 1500; i++ { // more than one batch
			l.Record(entry("mer_a", false, i, db.Now()))
		}
		cancel()
		<-done
		var n int
		if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM request_logs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != DefaultKeep {
			t.Fatalf("%d rows after stop, want %d (1500 written, pruned to the newest %d)", n, DefaultKeep, DefaultKeep)
		}
	})
}

// TestRunFlushesAFullBatchAtOnce: a full batch queued is written without
// waiting for the next tick (an hour here), so a burst faster than the buffer
// holds between two ticks is not dropped.
func TestRunFlushesAFullBatchAtOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		l := New(db, Config{Interval: time.Hour, Keep: 2 * maxBatch})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		for i := 0; i < maxBatch; i++ {
			l.Record(entry("mer_a", false, i, db.Now()))
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int
			if err := db.QueryRow(context.Background(), "SELECT COUNT(*) FROM request_logs").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == maxBatch {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d rows 30 s after a full batch was queued, want %d written before the tick", n, maxBatch)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestParseQuery checks the list's parameters.
func TestParseQuery(t *testing.T) {
	if _, _, err := ParseQuery(map[string][]string{"key_id": {"pk_test_secret"}}); err == nil {
		t.Fatal("a key itself (not its id) was accepted as key_id")
	}
	if _, k, err := ParseQuery(map[string][]string{"key_id": {"key_01ABC"}, "limit": {"5"}}); err != nil || k != "key_01ABC" {
		t.Fatalf("key_id: %q %v", k, err)
	}
	if _, _, err := ParseQuery(map[string][]string{"limit": {"1000"}}); err == nil {
		t.Fatal("limit 1000 accepted")
	}
}

// BenchmarkFlush measures one flush of 200 requests (about half a second of
// a busy merchant's traffic): the time the flusher holds the database.
func BenchmarkFlush(b *testing.B) {
	for _, eng := range storetest.Engines() {
		b.Run(string(eng), func(b *testing.B) {
			db := storetest.Open(b, eng)
			l := New(db, Config{Buffer: 1000})
			now := db.Now()
			for b.Loop() {
				for i := 0; i < 200; i++ {
					l.Record(entry("mer_a", false, i, now))
				}
				if err := l.Flush(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecord measures what the request path pays for the log: one
// Record (a channel send), with a reader draining the buffer as the flusher
// would.
func BenchmarkRecord(b *testing.B) {
	l := New(nil, Config{Buffer: DefaultBuffer})
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-l.in:
			case <-stop:
				return
			}
		}
	}()
	e := entry("mer_a", false, 1, time.Now())
	b.ReportAllocs()
	for b.Loop() {
		l.Record(e)
	}
	close(stop)
}
