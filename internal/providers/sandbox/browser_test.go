package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/store/storetest"
)

// chromiumPath finds the browser, or skips (fails under CI=true).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if apptest.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed and CI=true: the browser test is mandatory in CI (apt-get install -y chromium)")
	}
	t.Skip("browser test skipped: chromium is not installed (apt-get install -y chromium)")
	return ""
}

// TestHostedPagesInChromium completes the three hosted pages in a real
// headless browser: wallet_a's phone and PIN page, the card page with a
// 3-D Secure challenge, and wallet_d's method picker. Each lands on the
// merchant's return_url and the intent is succeeded. Screenshots of every
// page go to the test's artifact directory (kept with go test -artifacts).
func TestHostedPagesInChromium(t *testing.T) {
	bin := chromiumPath(t)
	e := apptest.Start(t, storetest.SQLite)

	// The merchant's return page shows which intent came back.
	returned := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>back at the shop</title><h1 id="back">Thanks</h1><p id="pi">%s</p>`,
			strings.ReplaceAll(r.URL.Query().Get("payment_intent"), "<", ""))
	}))
	defer returned.Close()

	shots := t.ArtifactDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 900),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	create := func(body map[string]any) (id, redirect string) {
		t.Helper()
		body["return_url"] = returned.URL + "/return?order=7"
		r := e.Post("/v1/payment_intents", body)
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		var in struct {
			ID         string `json:"id"`
			NextAction struct {
				Type        string `json:"type"`
				RedirectURL string `json:"redirect_url"`
			} `json:"next_action"`
		}
		r.JSON(t, &in)
		if in.NextAction.Type != "redirect" {
			t.Fatalf("next_action %+v", in.NextAction)
		}
		return in.ID, in.NextAction.RedirectURL
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// submit clicks a button and waits for the page the browser lands on.
	submit := func(button string) {
		t.Helper()
		if _, err := chromedp.Run(browser, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID(button)))); err != nil {
			t.Fatalf("click %s: %v", button, err)
		}
	}
	landed := func(id string) {
		t.Helper()
		if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID("back"))); err != nil {
			t.Fatalf("return page: %v", err)
		}
		loc, err := chromedp.Run(browser, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		if loc != returned.URL+"/return?order=7&payment_intent="+id {
			t.Fatalf("landed on %s", loc)
		}
		var in struct {
			Status string `json:"status"`
		}
		r := e.Get("/v1/payment_intents/" + id)
		if err := json.Unmarshal(r.Body, &in); err != nil || in.Status != "succeeded" {
			t.Fatalf("intent %s is %s after the page: %s", id, in.Status, r.Body)
		}
	}
	navigate := func(u string) {
		t.Helper()
		if err := chromedp.Do(browser, chromedp.Navigate(u)); err != nil {
			t.Fatalf("navigate: %v", err)
		}
	}

	t.Run("wallet_a phone and PIN", func(t *testing.T) {
		id, u := create(map[string]any{"amount": 1500, "currency": "DJF", "provider": "wallet_a", "metadata": map[string]string{"wallet_a_mode": "hpp"}})
		navigate(u)
		if err := chromedp.Do(browser,
			chromedp.SendKeys(chromedp.ID("phone"), "+25377123456"),
			chromedp.SendKeys(chromedp.ID("pin"), "4321"),
		); err != nil {
			t.Fatal(err)
		}
		shot("wallet_a_hpp")
		submit("pay")
		shot("wallet_a_hpp_returned")
		landed(id)
	})
	t.Run("card with 3-D Secure", func(t *testing.T) {
		id, u := create(map[string]any{"amount": 25, "currency": "USD", "provider": "wallet_a", "metadata": map[string]string{"wallet_a_mode": "card"}})
		navigate(u)
		if err := chromedp.Do(browser,
			chromedp.SendKeys(chromedp.ID("card_number"), "4000 0000 0000 3220"),
			chromedp.SendKeys(chromedp.ID("exp_month"), "12"),
			chromedp.SendKeys(chromedp.ID("exp_year"), "2034"),
			chromedp.SendKeys(chromedp.ID("cvc"), "123"),
		); err != nil {
			t.Fatal(err)
		}
		shot("card")
		submit("pay")
		if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID("complete"))); err != nil {
			t.Fatalf("3-D Secure page: %v", err)
		}
		shot("card_3ds")
		submit("complete")
		shot("card_returned")
		landed(id)
		r := e.Get("/v1/payment_intents/" + id)
		if !strings.Contains(string(r.Body), `"last4":"3220"`) || strings.Contains(string(r.Body), "4000000000003220") {
			t.Fatalf("payment_method_details: %s", r.Body)
		}
	})
	t.Run("wallet_d method picker", func(t *testing.T) {
		id, u := create(map[string]any{"amount": 120, "currency": "ETB", "provider": "wallet_d"})
		navigate(u)
		if err := chromedp.Do(browser, chromedp.Click(chromedp.ID("method_mpesa"))); err != nil {
			t.Fatal(err)
		}
		shot("wallet_d_picker")
		submit("pay")
		landed(id)
		r := e.Get("/v1/payment_intents/" + id)
		if !strings.Contains(string(r.Body), `"method":"mpesa"`) {
			t.Fatalf("payment_method_details: %s", r.Body)
		}
	})
	t.Logf("screenshots in %s", shots)
	e.RequireSecretsAbsent("4000000000003220", "4000 0000 0000 3220")
}
