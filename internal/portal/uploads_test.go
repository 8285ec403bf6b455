package portal_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/httpx"
)

const uploadBoundary = "payd-test-boundary"

// uploadHead is a batch upload form up to the start of its file's content.
func uploadHead(csrf string) string {
	b := "--" + uploadBoundary + "\r\n"
	return b + "Content-Disposition: form-data; name=\"csrf_token\"\r\n\r\n" + csrf + "\r\n" +
		b + "Content-Disposition: form-data; name=\"currency\"\r\n\r\nDJF\r\n" +
		b + "Content-Disposition: form-data; name=\"file\"; filename=\"rows.csv\"\r\nContent-Type: text/csv\r\n\r\n"
}

const uploadTail = "\r\n--" + uploadBoundary + "--\r\n"

// postUpload sends a batch upload whose body is read from body with no
// length given (chunked), which counts as a large upload.
func postUpload(p *apptest.Portal, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest("POST", p.Base+"/portal/test/batches", io.MultiReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+uploadBoundary)
	resp, err := p.Client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// TestBatchUploadsBoundedPerUser: a portal user has at most
// httpx.MaxUploadsPerKey large batch uploads in flight. With two held open by
// slow bodies, a third answers 429 too_many_uploads with Retry-After, even
// one whose body never arrives (it is not read); another user is not
// affected; once the two finish (both create their batch), the user's next
// upload is accepted.
func TestBatchUploadsBoundedPerUser(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, 1_000_000)
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/batches")
		head := uploadHead(admin.CSRF)

		type answer struct {
			resp *http.Response
			err  error
		}
		var slow [httpx.MaxUploadsPerKey]*io.PipeWriter
		var answers [httpx.MaxUploadsPerKey]chan answer
		// startSlow sends upload i's form up to its first CSV line and
		// holds the rest back.
		startSlow := func(i int) {
			pr, pw := io.Pipe()
			slow[i], answers[i] = pw, make(chan answer, 1)
			go func(ch chan answer) {
				resp, err := postUpload(admin, pr)
				ch <- answer{resp, err}
			}(answers[i])
			if _, err := pw.Write([]byte(head + "recipient_msisdn,recipient_account,amount,provider,reference,description\n")); err != nil {
				t.Fatal(err)
			}
		}
		for i := range slow {
			startSlow(i)
		}
		defer func() {
			for _, pw := range slow {
				pw.CloseWithError(io.ErrUnexpectedEOF)
			}
		}()

		// A complete third upload is refused once both slow ones hold their
		// slots. Until they do, it may be accepted (its file is empty: 400,
		// nothing created), and while it is served a slow one arriving may
		// itself be refused; that one is sent again. A slow upload cannot
		// end otherwise, so a 429 here means both hold a slot.
		var refused *http.Response
		for deadline := time.Now().Add(20 * time.Second); refused == nil; time.Sleep(20 * time.Millisecond) {
			for i, ch := range answers {
				select {
				case a := <-ch:
					if a.err != nil || a.resp.StatusCode != http.StatusTooManyRequests {
						t.Fatalf("slow upload %d ended before its body did: %v %v", i, a.resp, a.err)
					}
					startSlow(i)
				default:
				}
			}
			resp, err := postUpload(admin, strings.NewReader(head+uploadTail))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				refused = resp
			} else if time.Now().After(deadline) {
				t.Fatalf("a third upload while two are in flight: %d, want 429", resp.StatusCode)
			}
		}
		if refused.Header.Get("Retry-After") != "1" {
			t.Fatalf("429 without Retry-After: %v", refused.Header)
		}

		// The refusal comes before the body is read: this one never sends it.
		never, neverW := io.Pipe()
		defer neverW.Close()
		got := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest("POST", admin.Base+"/portal/test/batches", never)
			req.Header.Set("Content-Type", "multipart/form-data; boundary="+uploadBoundary)
			resp, err := admin.Client.Do(req)
			var body []byte
			if err == nil {
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if !strings.Contains(string(body), "too_many_uploads") || !strings.Contains(string(body), "large uploads in progress") {
					err = fmt.Errorf("429 page does not say why:\n%.800s", body)
				}
			}
			got <- answer{resp, err}
		}()
		select {
		case a := <-got:
			if a.err != nil || a.resp.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("upload with an unsent body: %v %v", a.resp, a.err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("an upload over the bound waited for its body instead of being refused")
		}

		// The bound is per user: another user's upload goes through.
		other := newUser(t, e, "uploader@example.com", "approver")
		other.Get("/portal/test/batches")
		resp, err := postUpload(other, strings.NewReader(uploadHead(other.CSRF)+
			"recipient_msisdn,recipient_account,amount,provider,reference,description\n+25377000009,,900,wallet_b,other-1,x\n"+uploadTail))
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("another user's upload: %v %v", resp, err)
		}

		// The slow uploads finish and create their batches; their slots free.
		for i, pw := range slow {
			if _, err := fmt.Fprintf(pw, "+2537700001%d,,1000,wallet_b,slow-%d,x\n%s", i, i, uploadTail); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			if a := <-answers[i]; a.err != nil || a.resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("slow upload %d: %v %v", i, a.resp, a.err)
			}
		}
		resp, err = postUpload(admin, strings.NewReader(head+
			"recipient_msisdn,recipient_account,amount,provider,reference,description\n+25377000020,,800,wallet_b,after-1,x\n"+uploadTail))
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("an upload after the others finished: %v %v", resp, err)
		}
	})
}
