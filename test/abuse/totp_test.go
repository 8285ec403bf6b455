package abuse_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
)

var totpSecretRE = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)

// totpAt plays the authenticator app (RFC 6238: 30 s steps, 6 digits,
// HMAC-SHA-1), independently of the portal's own code.
func totpAt(t *testing.T, secret string, at time.Time) string {
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		t.Fatal(err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1_000_000)
}

// TestAbuseTOTPForm floods the account page's TOTP removal form with 300
// wrong codes from 16 concurrent clients: at most the ten attempts the
// account allows are checked (400), every other answer is 429 and none a
// 5xx; then the right code is refused too and the second factor stays on.
func TestAbuseTOTPForm(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/account")
		m := totpSecretRE.FindStringSubmatch(admin.Post("/portal/test/account/totp", nil).Body)
		if m == nil {
			t.Fatal("no TOTP secret offered")
		}
		if pg := admin.Post("/portal/test/account/totp/confirm", url.Values{"code": {totpAt(t, m[1], time.Now())}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("enable TOTP: %d", pg.Status)
		}
		admin.Get("/portal/test/account")
		csrf := admin.CSRF
		wrong := totpAt(t, m[1], time.Now().Add(-48*time.Hour))
		statuses := map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		work := make(chan int)
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					status, err := portalSend(admin.Client, e.URL, "POST", "/portal/test/account/totp/disable",
						url.Values{"code": {wrong}, "csrf_token": {csrf}})
					mu.Lock()
					if err != nil {
						statuses[-1]++
					} else {
						statuses[status]++
					}
					mu.Unlock()
				}
			}()
		}
		for i := 0; i < 300; i++ {
			work <- i
		}
		close(work)
		wg.Wait()
		t.Logf("300 wrong codes: statuses %v", statuses)
		if statuses[http.StatusBadRequest] > 10 || statuses[http.StatusBadRequest]+statuses[http.StatusTooManyRequests] != 300 {
			t.Fatalf("wrong codes checked or failed beyond the account's ten attempts: %v", statuses)
		}
		status, err := portalSend(admin.Client, e.URL, "POST", "/portal/test/account/totp/disable",
			url.Values{"code": {totpAt(t, m[1], time.Now())}, "csrf_token": {csrf}})
		if err != nil || status != http.StatusTooManyRequests {
			t.Fatalf("the right code after the flood: %d %v", status, err)
		}
		var on int
		if err := e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM portal_totp WHERE enabled_at IS NOT NULL").Scan(&on); err != nil || on != 1 {
			t.Fatalf("TOTP removed: %d %v", on, err)
		}
	}, func(c *app.Config) { c.PublicRateLimit = -1 })
}
