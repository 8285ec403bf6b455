package payouts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// heapPeak samples the heap's object bytes (runtime/metrics) until stop is
// called, and returns the largest value seen.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak
	}
}

func heapNow() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// answeredConn is a client connection that, once a write fails, drops the
// rest of what the client writes as though sent. A server refusing an upload
// before reading it answers and closes the connection; the client, still
// sending its 9 MB, then meets a broken pipe, and Go's transport reports that
// failed write instead of the answer already waiting to be read when the
// write's failure reaches it first (a race that load decides). With the
// write's failure dropped the transport reads the answer; a server that
// closed without answering still fails the request, as reading fails.
type answeredConn struct {
	net.Conn
	dropped atomic.Bool
}

func (c *answeredConn) Write(p []byte) (int, error) {
	if c.dropped.Load() {
		return len(p), nil
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.dropped.Store(true)
		return len(p), nil
	}
	return n, nil
}

// answeringClient returns a client whose connections are answeredConns.
func answeringClient() *http.Client {
	var d net.Dialer
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &answeredConn{Conn: c}, nil
		},
	}}
}

// uploadCSV is a 9 MB variant B CSV of 10,000 rows whose descriptions are
// too long: the whole file must be read, and every row is refused.
func uploadCSV() []byte {
	var b strings.Builder
	b.WriteString("recipient_msisdn,recipient_account,amount,provider,reference,description\n")
	desc := strings.Repeat("d", 880)
	for i := 0; i < 10_000; i++ {
		fmt.Fprintf(&b, "+2537700%04d,,%d,wallet_b,ref-%d,%s\n", i, 100+i, i, desc)
	}
	return []byte(b.String())
}

// TestBulkUploadMemoryBounded floods POST /v1/payouts/bulk with 24
// concurrent 9 MB CSV uploads from one key (the review sent 60: the process
// grew from 180 MB to 1.6 GB). The CSV is parsed as it streams from a
// spooled file and a key has at most two large uploads in flight, the others
// answering 429 too_many_uploads: the heap grows by well under the uploads'
// size, no answer is a 5xx, and every refusal names its rows.
func TestBulkUploadMemoryBounded(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		defer debug.SetGCPercent(debug.SetGCPercent(25)) // the peak then tracks what is live
		csv := uploadCSV()
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		mw.WriteField("currency", "DJF")
		fw, _ := mw.CreateFormFile("file", "batch.csv")
		fw.Write(csv)
		mw.Close()
		body, contentType := form.Bytes(), mw.FormDataContentType()

		const uploads = 24
		client := answeringClient()
		// post sends upload i and reports its answer, and whether the
		// server closed the connection before reading the whole body.
		post := func(i int) (status int, out []byte, cut bool, err error) {
			var conn *answeredConn
			trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { conn, _ = ci.Conn.(*answeredConn) }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
				"POST", e.URL+"/v1/payouts/bulk", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+e.SK)
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Idempotency-Key", fmt.Sprintf("flood-%s-%d-%d", e.Engine, time.Now().UnixNano(), i))
			resp, err := client.Do(req)
			if err != nil {
				return 0, nil, false, err
			}
			defer resp.Body.Close()
			out, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			return resp.StatusCode, out, conn != nil && conn.dropped.Load(), err
		}

		base := heapNow()
		stop := heapPeak()
		type answer struct {
			status int
			body   []byte
			cut    bool
			err    error
		}
		answers := make([]answer, uploads)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range answers {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				s, b, cut, err := post(i)
				answers[i] = answer{s, b, cut, err}
			}(i)
		}
		close(start)
		wg.Wait()
		peak := stop()
		growth := int64(peak) - int64(base)
		t.Logf("%d concurrent uploads of %d bytes: heap %d MB before, peak %d MB (growth %d MB)",
			uploads, len(body), base>>20, peak>>20, growth>>20)

		// Without the bound and the streaming parse each upload held about
		// three copies of itself: 24 uploads grew the heap by over 600 MB.
		if limit := int64(160 << 20); growth > limit {
			t.Fatalf("the heap grew by %d MB under %d concurrent uploads, more than %d MB", growth>>20, uploads, limit>>20)
		}
		counts := map[int]int{}
		cut := 0
		for i, a := range answers {
			if a.err != nil {
				t.Fatalf("upload %d: %v", i, a.err)
			}
			counts[a.status]++
			// Only a refusal may leave the body unread (the server closes
			// rather than read 9 MB it turned away); an upload it parsed
			// was read to its end.
			if a.cut {
				cut++
				if a.status != http.StatusTooManyRequests {
					t.Fatalf("upload %d: the connection closed before the body was sent, yet the answer is %d %.300s", i, a.status, a.body)
				}
			}
			var eb struct {
				Error struct {
					Code string `json:"code"`
					Rows []struct {
						Row   int    `json:"row"`
						Param string `json:"param"`
					} `json:"rows"`
				} `json:"error"`
			}
			json.Unmarshal(a.body, &eb)
			switch a.status {
			case http.StatusBadRequest:
				if len(eb.Error.Rows) != 100 || eb.Error.Rows[0].Row != 1 || eb.Error.Rows[0].Param != "description" {
					t.Fatalf("upload %d: the refusal does not name the rows: %.300s", i, a.body)
				}
			case http.StatusTooManyRequests:
				if eb.Error.Code != "too_many_uploads" {
					t.Fatalf("upload %d: 429 %.300s, want too_many_uploads", i, a.body)
				}
			default:
				t.Fatalf("upload %d: %d %.300s", i, a.status, a.body)
			}
		}
		if counts[http.StatusBadRequest] == 0 || counts[http.StatusTooManyRequests] == 0 {
			t.Fatalf("answers %v: want some uploads parsed and some refused as too many", counts)
		}
		t.Logf("answers %v; %d refusals closed the connection before their body was sent", counts, cut)
		// The slots are free again, and one upload is read once: what it
		// allocates is its rows (about 1.4 times the file here, with every
		// row's error message), the request's own work and what background
		// workers allocate meanwhile, not whole copies of the body and the
		// multipart part besides, each grown by appending (what the handler
		// did before the parse streamed).
		allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		if s, b, cut, err := post(uploads); err != nil || s != http.StatusBadRequest || cut {
			t.Fatalf("upload after the flood: %d %.300s (cut short %v) %v", s, b, cut, err)
		}
		metrics.Read(allocs)
		allocated := allocs[0].Value.Uint64() - before
		t.Logf("one upload of %d bytes allocated %d MB", len(body), allocated>>20)
		if allocated > uint64(4*len(body)) {
			t.Fatalf("one upload of %d MB allocated %d MB: the body is copied, not streamed", len(body)>>20, allocated>>20)
		}
	})
}
