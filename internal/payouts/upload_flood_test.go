package payouts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/httpx"
)

// floodKeys is how many secret keys the flood uses: with the merchant's
// publishable key, the most active keys a merchant may hold in one mode.
const floodKeys = 19

// peakHeapLimit is the target for the process's peak heap under the flood.
const peakHeapLimit = 150 << 20

// TestBulkUploadFloodManyKeys is finding 6's attack: one merchant's many
// keys (19 secret keys, the most it can make) each send two concurrent
// 9 MB uploads. Per-key slots alone let all 38 be parsed at once (25 keys
// reached 731 MB); the per-merchant and per-process bounds keep at most
// httpx.MaxUploadsPerMerchant in flight, so the peak heap of the process
// (not only its growth) stays under 150 MB, every extra upload answers 429
// too_many_uploads, none a 5xx.
func TestBulkUploadFloodManyKeys(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		defer debug.SetGCPercent(debug.SetGCPercent(25)) // the peak then tracks what is live
		keys := append([]string(nil), e.Merchant.SecretKeys...)
		for len(keys) < floodKeys {
			k, err := e.Main.Merchants.CreateKey(context.Background(), e.Merchant.MerchantID, false, auth.KindSecret)
			if err != nil {
				t.Fatalf("key %d: %v", len(keys), err)
			}
			keys = append(keys, k.Secret)
		}
		csv := uploadCSV()
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		mw.WriteField("currency", "DJF")
		fw, _ := mw.CreateFormFile("file", "batch.csv")
		fw.Write(csv)
		mw.Close()
		body, contentType := form.Bytes(), mw.FormDataContentType()

		type answer struct {
			status int
			body   []byte
			err    error
		}
		answers := make([]answer, 2*len(keys))
		base := heapNow()
		stop := heapPeak()
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range answers {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				req, _ := http.NewRequest("POST", e.URL+"/v1/payouts/bulk", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+keys[i/2])
				req.Header.Set("Content-Type", contentType)
				req.Header.Set("Idempotency-Key", fmt.Sprintf("flood-%s-%d-%d", e.Engine, time.Now().UnixNano(), i))
				resp, err := e.Client.Do(req)
				if err != nil {
					answers[i] = answer{err: err}
					return
				}
				defer resp.Body.Close()
				out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				answers[i] = answer{resp.StatusCode, out, err}
			}(i)
		}
		close(start)
		wg.Wait()
		peak := stop()
		t.Logf("%d keys x 2 concurrent uploads of %d bytes: heap %d MB before, peak %d MB", len(keys), len(body), base>>20, peak>>20)
		if peak > peakHeapLimit {
			t.Fatalf("the process's heap peaked at %d MB under the flood, more than %d MB", peak>>20, peakHeapLimit>>20)
		}
		counts := map[int]int{}
		for i, a := range answers {
			if a.err != nil {
				// A refused upload's connection closes unread: the
				// client may fail writing the body before reading the 429.
				if !errors.Is(a.err, syscall.EPIPE) && !errors.Is(a.err, syscall.ECONNRESET) {
					t.Fatalf("upload %d: %v", i, a.err)
				}
				counts[http.StatusTooManyRequests]++
				continue
			}
			counts[a.status]++
			var eb struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			json.Unmarshal(a.body, &eb)
			switch a.status {
			case http.StatusBadRequest: // parsed: its rows are refused (descriptions too long)
			case http.StatusTooManyRequests:
				if eb.Error.Code != "too_many_uploads" {
					t.Fatalf("upload %d: 429 %.300s, want too_many_uploads", i, a.body)
				}
			default:
				t.Fatalf("upload %d: %d %.300s", i, a.status, a.body)
			}
		}
		// At most MaxUploadsPerMerchant run at once: with all started
		// together, most of the 38 are refused.
		if counts[http.StatusBadRequest] == 0 || counts[http.StatusTooManyRequests] < len(answers)-4*httpx.MaxUploadsPerMerchant {
			t.Fatalf("answers %v: want at most a few parsed and the rest refused as too many", counts)
		}
	})
}
