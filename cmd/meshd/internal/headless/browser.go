package headless

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium or Chrome binary, or "" when
// there is none (.ci/install-chromium.sh installs one). MESHD_CHROMIUM
// overrides the search.
func Chromium() string {
	if p := os.Getenv("MESHD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NeedChromium returns the path of a Chromium binary (see Chromium), or
// skips t when there is none or the tests run with -short.
func NeedChromium(t testing.TB) string {
	t.Helper()
	exe := Chromium()
	if exe == "" {
		t.Skip("no Chromium binary found (install it with .ci/install-chromium.sh, or set MESHD_CHROMIUM)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	return exe
}

// Browser is one headless Chromium tab acting for one (sub)test. It is not
// safe for concurrent use: actions run one after another.
type Browser struct {
	t   testing.TB
	ctx context.Context
	log *pageLog
}

// pageLog collects the uncaught exceptions and console errors of the page.
type pageLog struct {
	mu     sync.Mutex
	errors []string
}

func (l *pageLog) add(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, msg)
}

// reportViolations makes every page report what its
// Content-Security-Policy refused, as a console error.
const reportViolations = `document.addEventListener('securitypolicyviolation',
  (e) => console.error('CSP refused ' + e.blockedURI + ' (' + e.violatedDirective + ')'));`

// Start launches exe headless with a 1600×1000 window; the browser ends
// with the test's cleanup. A 90-second guard ends a hung browser.
func Start(t testing.TB, exe string) *Browser {
	t.Helper()
	// chromedp's defaults (headless, no extensions, no background work),
	// then what a sandbox-less, offline machine needs.
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	// A guard against a hung browser, not a timing assertion.
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
	})
	b := &Browser{t: t, ctx: ctx, log: &pageLog{}}
	if err := chromedp.Listen(ctx, b.log.collect); err != nil {
		t.Fatalf("starting the browser: %v", err)
	}
	b.Run(chromedp.EmulateViewport(1600, 1000), func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: reportViolations})
		return chromedp.Void{}, err
	})
	return b
}

func (l *pageLog) collect(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg := ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil {
			msg += " " + ex.Description
		}
		l.add(msg)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			l.add("console.error: " + strings.Join(args, " "))
		}
	}
}

// On returns the browser reporting failures to t, for a subtest.
func (b *Browser) On(t testing.TB) *Browser { return &Browser{t: t, ctx: b.ctx, log: b.log} }

// Run runs the actions, failing the test on an error.
func (b *Browser) Run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// WaitJS waits until the JavaScript expression is truthy, for at most 20
// seconds, a guard rather than a timing assertion. On a timeout it fails
// the test with the start of the side panel's text, for context.
func (b *Browser) WaitJS(what, expr string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		panel, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('panel-body') ? document.getElementById('panel-body').innerText.slice(0, 400) : ''`))
		b.t.Fatalf("waiting for %s (%s): %v; panel: %q", what, expr, err, panel)
	}
}

// Eval returns the value of a JavaScript expression; a promise is awaited.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// PageErrors returns the page's uncaught exceptions, console errors and
// policy violations so far, of every page the tab showed.
func (b *Browser) PageErrors() []string {
	b.log.mu.Lock()
	defer b.log.mu.Unlock()
	return append([]string(nil), b.log.errors...)
}

// Screenshot writes a PNG of the window to path, creating its folder.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
