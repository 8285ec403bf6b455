package portal_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// tab is a headless Chromium tab driven by one test.
type tab struct {
	t   *testing.T
	ctx context.Context
	n   int // screenshots taken, to number them
}

// browser returns a tab of its own for one test: a new browser context (its
// own cookies, storage and cache, as a fresh profile has) in the headless
// Chromium the package's tests share. It skips when Chromium is not
// installed, unless CI=true, where a missing browser fails.
//
// One Chromium serves every test (startChromium): starting one per test
// cost a second or more of CPU each, twenty times a run.
func browser(t *testing.T) *tab {
	t.Helper()
	path := os.Getenv("PAYD_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed and CI=true: the browser tests are mandatory in CI (apt-get install -y chromium)")
		}
		t.Skip("browser test skipped: chromium not found (apt-get install -y chromium, or set PAYD_CHROMIUM to its path)")
	}
	chromium.once.Do(func() { chromium.err = startChromium(path) })
	if chromium.err != nil {
		t.Fatalf("start chromium: %v", chromium.err)
	}
	ctx, cancelTab := chromedp.NewContext(chromium.ctx, chromedp.WithNewBrowserContext())
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab in chromium: %v", err)
	}
	return &tab{t: t, ctx: ctx}
}

// chromium is the headless browser the package's tests share, started by
// the first test that needs it and stopped by TestMain.
var chromium struct {
	once sync.Once
	err  error
	dir  string          // its profile
	ctx  context.Context // its first tab, kept open until the end
	stop func()
}

// startChromium starts the shared browser with a fresh profile and none of
// the browser's own network services.
func startChromium(path string) error {
	dir, err := os.MkdirTemp("", "payd-chromium-")
	if err != nil {
		return err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	chromium.dir, chromium.ctx = dir, ctx
	chromium.stop = func() { cancelBrowser(); cancelAlloc(); os.RemoveAll(dir) }
	return chromedp.Do(ctx)
}

// stopChromium stops the shared browser, if a test started it.
func stopChromium() {
	if chromium.stop != nil {
		chromium.stop()
	}
}

// do runs steps, failing the test on the first error.
func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// open navigates to a URL.
func (b *tab) open(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url))
}

// press runs a step that submits a form or follows a link, and waits for the
// page it leads to.
func (b *tab) press(trigger chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, trigger)); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// click clicks the element matching a CSS selector and waits for the page
// it leads to.
func (b *tab) click(sel string) {
	b.t.Helper()
	b.press(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// text reads the visible text of the element matching sel, waiting for it.
func (b *tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// waitText waits until the element with this id has exactly the text want,
// reading it with a script so that a page replacing the element or
// reloading itself meanwhile (as the batch page's progress script does) is
// only a miss, not an error.
func (b *tab) waitText(id, want string, timeout time.Duration) bool {
	b.t.Helper()
	js := `(function(){var e=document.getElementById(` + strconv.Quote(id) + `);return e?e.textContent.trim():"";})()`
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js)); err == nil && s == want {
			return true
		}
	}
	return false
}

// count counts the elements matching sel, without waiting.
func (b *tab) count(sel string) int {
	b.t.Helper()
	nodes, err := chromedp.Run(b.ctx, chromedp.Nodes(chromedp.CSSAll(sel), chromedp.AtLeast(0)))
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return len(nodes)
}

// shot saves a full-page screenshot (PNG), numbered, under the test's artifact
// directory (kept with `go test -artifacts`).
func (b *tab) shot(name string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	b.n++
	path := filepath.Join(b.t.ArtifactDir(), pad2(b.n)+"-"+name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
	if dir := os.Getenv("PAYD_PORTAL_SCREENSHOTS"); dir != "" && docShots[name] {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// docShots are the screenshots docs/portal.md shows. With
// PAYD_PORTAL_SCREENSHOTS=docs/portal the browser tests write each of them
// there under its name, so the pictures are always of the portal as its
// tests drive it:
//
//	PAYD_PORTAL_SCREENSHOTS=$PWD/docs/portal go test ./internal/portal -run Browser
var docShots = map[string]bool{
	"signed-in": true, "batch-uploaded": true, "batch-rows-1280": true, "deliveries-1280": true,
	"compliance-queue": true, "dispute-evidence-form": true, "refund-requires-approval": true,
	"portal-invoice": true, "capture-form": true, "live-mode": true,
	"search-email": true, "test-clock-advanced": true, "invoice-actions": true,
}

func pad2(n int) string {
	if n < 10 {
		return "0" + string(rune('0'+n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}

// login signs in through the form with the keyboard only: type into the
// labelled fields and press Enter.
func (b *tab) login(base, email, password string) {
	b.t.Helper()
	b.open(base + "/portal/test/")
	b.do(chromedp.WaitVisible(chromedp.ID("f-email")), chromedp.SendKeys(chromedp.ID("f-email"), email))
	b.press(chromedp.SendKeys(chromedp.ID("f-password"), password+kb.Enter))
	b.do(chromedp.WaitVisible(chromedp.ID("mode-badge")))
}
