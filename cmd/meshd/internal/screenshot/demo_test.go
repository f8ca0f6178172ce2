package screenshot

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	"github.com/chromedp/chromedp"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/cmd/meshd/internal/headless"
	"github.com/meshd/meshd/internal/leakcheck"
)

var update = flag.Bool("update-screenshot", false, "write docs/img/debug-ui.png from the demo")

// shown is the collection whose panel the screenshot shows.
const shown = "Endpoints"

// startDemo runs meshd as `go run ./cmd/meshd` would, but on loopback
// ports the system picks, until the end of the test.
func startDemo(t *testing.T) *app.App {
	t.Helper()
	cfg, err := app.ParseFlags([]string{"--xds-addr=127.0.0.1:0", "--debug-addr=127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Demo() {
		t.Fatal("no source flag given, yet not the demo")
	}
	a, err := app.New(cfg)
	if err != nil {
		t.Fatalf("starting the demo: %v", err)
	}
	testrun.Go(t, a.Run)
	return a
}

func TestDemoScreenshot(t *testing.T) {
	exe := headless.NeedChromium(t)
	// Registered first, so it runs after the demo and the browser ended.
	t.Cleanup(func() { leakcheck.VerifyNone(t) })
	a := startDemo(t)
	var want []string
	for _, c := range a.Model().Graph.Describe().Collections {
		want = append(want, c.Name)
	}
	slices.Sort(want)
	if !slices.Contains(want, shown) {
		t.Fatalf("the demo has no collection %q to show; it has %v", shown, want)
	}

	b := headless.Start(t, exe)
	b.Run(chromedp.Navigate("http://" + a.DebugAddr() + "/"))
	b.WaitJS("every collection drawn", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, len(want)))
	got := headless.Eval[[]string](b, `[...document.querySelectorAll('#nodes g.node')].map(n => n.dataset.name).sort()`)
	if !slices.Equal(got, want) {
		t.Errorf("the page draws %v, the demo has %v", got, want)
	}
	b.WaitJS("the stream to be live", `document.getElementById('status').dataset.state === 'live'`)
	t.Logf("the demo's %d collections: %v", len(want), want)

	node := fmt.Sprintf(`#nodes g.node[data-name=%q]`, shown)
	b.Run(chromedp.Click(chromedp.CSS(node)))
	b.WaitJS("its items", `document.querySelectorAll('#p-items details.item').length > 0`)
	// Fit the whole graph beside the panel; a click from script leaves the
	// mouse, and so the hover style, off the button.
	b.Run(chromedp.Click(chromedp.CSS(`#p-items details.item summary`)))
	headless.Eval[bool](b, `document.getElementById('fit').click(), true`)
	if *update {
		b.Run(chromedp.Sleep(500 * time.Millisecond)) // let the pulse animation settle
		path := filepath.Join("..", "..", "..", "..", "docs", "img", "debug-ui.png")
		b.Screenshot(path)
		t.Logf("wrote %s", path)
	}
	if errs := b.PageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
}
