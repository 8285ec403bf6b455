package abuse_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
)

// merchantUploads is the documented number of large uploads one merchant
// may have in flight at once (httpx.MaxUploadsPerMerchant).
const merchantUploads = 4

// TestAbuseUploadFloodPerMerchant: one merchant makes keys until refused
// (409 too_many_api_keys at merchants.MaxActiveKeys), then every key opens
// two slow large uploads at once (bodies of unknown length that stall).
// However many keys, at most merchantUploads hold a slot: the
// rest answer 429 too_many_uploads while those stall; none is a 5xx.
func TestAbuseUploadFloodPerMerchant(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		keys := append([]string(nil), e.Merchant.SecretKeys...)
		for {
			k, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, false, auth.KindSecret)
			if ee := errs.As(err); ee != nil && ee.Code == "too_many_api_keys" {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.Secret)
			if len(keys) > 100 {
				t.Fatal("100 keys made: no cap on a merchant's keys")
			}
		}
		if len(keys) != merchants.MaxActiveKeys-1 { // the publishable key is the 20th
			t.Fatalf("%d secret keys made before the cap, want %d", len(keys), merchants.MaxActiveKeys-1)
		}
		n := 2 * len(keys)
		writers := make([]*io.PipeWriter, n)
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			pr, pw := io.Pipe()
			writers[i] = pw
			req, _ := http.NewRequest("POST", e.URL+"/v1/payouts/bulk", pr)
			req.ContentLength = -1 // chunked: a large upload of unknown length
			req.Header.Set("Authorization", "Bearer "+keys[i/2])
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("abuse-flood-%d-%d", time.Now().UnixNano(), i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := e.Client.Do(req)
				if err != nil {
					statuses <- -1
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses <- resp.StatusCode
			}()
			go pw.Write([]byte("--x\r\n")) // a start, then the body stalls
		}
		refused := 0
		timeout := time.After(30 * time.Second)
		for refused < n-merchantUploads {
			select {
			case s := <-statuses:
				if s != http.StatusTooManyRequests {
					t.Fatalf("while the slots are held: status %d, want 429 (refused %d so far)", s, refused)
				}
				refused++
			case <-timeout:
				t.Fatalf("only %d of %d uploads refused while %d may hold slots", refused, n, merchantUploads)
			}
		}
		select {
		case s := <-statuses:
			t.Fatalf("an upload holding a slot answered %d while its body stalls: more than %d held slots", s, merchantUploads)
		case <-time.After(300 * time.Millisecond):
		}
		for _, pw := range writers {
			pw.CloseWithError(io.ErrUnexpectedEOF)
		}
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s >= 500 {
				t.Fatalf("a stalled upload ended with %d", s)
			}
		}
	})
}
