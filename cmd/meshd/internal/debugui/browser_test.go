package debugui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/meshd/meshd/krt"
)

// screenshotEnv, set to 1, makes TestBrowser rewrite the README's
// screenshots in docs/img.
const screenshotEnv = "MESHD_UPDATE_SCREENSHOT"

// chromium returns the path of a Chromium or Chrome binary, or "".
// MESHD_CHROMIUM overrides the search.
func chromium() string {
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

// browser drives one headless Chromium tab on behalf of one (sub)test.
type browser struct {
	t   *testing.T
	ctx context.Context
	log *pageLog
}

// pageLog collects the uncaught exceptions and console errors of the page.
type pageLog struct {
	mu     sync.Mutex
	errors []string
}

// on returns the browser reporting failures to t, for a subtest.
func (b *browser) on(t *testing.T) *browser { return &browser{t: t, ctx: b.ctx, log: b.log} }

func newBrowser(t *testing.T, exe string) *browser {
	// chromedp's defaults (headless, no extensions, no background work),
	// then what this sandbox-less, offline machine needs.
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
	b := &browser{t: t, ctx: ctx, log: &pageLog{}}
	err := chromedp.Listen(ctx, func(ev any) {
		b.log.mu.Lock()
		defer b.log.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil {
				msg += " " + ex.Description
			}
			b.log.errors = append(b.log.errors, msg)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.log.errors = append(b.log.errors, "console.error: "+strings.Join(args, " "))
			}
		}
	})
	if err != nil {
		t.Fatalf("starting the browser: %v", err)
	}
	return b
}

func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// waitJS waits until the JavaScript expression is truthy.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		state, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('panel-body') ? document.getElementById('panel-body').innerText.slice(0, 400) : ''`))
		b.t.Fatalf("waiting for %s (%s): %v; panel: %q", what, expr, err, state)
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (b *browser) pageErrors() []string {
	b.log.mu.Lock()
	defer b.log.mu.Unlock()
	return append([]string(nil), b.log.errors...)
}

// nodeSel selects the graph node of a collection.
func nodeSel(name string) string { return fmt.Sprintf(`#nodes g.node[data-name=%q]`, name) }

func TestBrowser(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("no Chromium binary found (install it with .ci/install-chromium.sh, or set MESHD_CHROMIUM)")
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	// Registered first, so it runs after the browser's cleanup.
	t.Cleanup(func() { goleak.VerifyNone(t) })

	now := time.Now()
	f := newFixture()
	proxies := newFakeProxies(now)
	ui := New(f.g, WithProxies(proxies), WithProblems(newFakeProblems(now)), WithPollInterval(50*time.Millisecond))
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix(), ui)
	mux.Handle("/", ui.RedirectHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer ui.Close() // end the page's event stream before srv.Close waits for it

	start := time.Now()
	b := newBrowser(t, exe)
	// Through the root redirect to the page.
	b.run(chromedp.EmulateViewport(1600, 1000), chromedp.Navigate(srv.URL+"/"))
	b.waitJS("every node drawn", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, len(f.names)))
	t.Logf("browser started and drew the graph in %v", time.Since(start).Round(time.Millisecond))
	if got := eval[string](b, `location.pathname`); got != "/debug/ui" {
		t.Errorf("page at %s, want /debug/ui", got)
	}
	eval[int](b, `window.__noReload = 1`)

	t.Run("no replica badge", func(t *testing.T) {
		b := b.on(t)
		// Without leader election the page learns there is no replica
		// view, and shows no badge.
		b.waitJS("the replica view's absence", `document.getElementById('replica').dataset.role === 'none'`)
		if eval[bool](b, `document.getElementById('replica').checkVisibility()`) {
			t.Errorf("a replica badge shows without leader election: %q", eval[string](b, `document.getElementById('replica').textContent`))
		}
	})

	t.Run("graph", func(t *testing.T) {
		b := b.on(t)
		names := eval[[]string](b, `[...document.querySelectorAll('#nodes g.node')].map(n => n.dataset.name).sort()`)
		if !slices.Equal(names, f.sortedNames()) {
			t.Errorf("nodes %v, want %v", names, f.sortedNames())
		}
		labels := eval[[]string](b, `[...document.querySelectorAll('#nodes g.node text.name')].map(n => n.textContent).sort()`)
		if !slices.Equal(labels, f.sortedNames()) {
			t.Errorf("node labels %v, want %v", labels, f.sortedNames())
		}
		// One drawn edge per pair of collections that read each other.
		info := f.g.Describe()
		pairs := map[[2]int]bool{}
		for _, e := range info.Edges {
			if e.From != e.To {
				pairs[[2]int{e.From, e.To}] = true
			}
		}
		if got := eval[int](b, `document.querySelectorAll('#edges path.edge').length`); got != len(pairs) {
			t.Errorf("%d edges drawn, want %d", got, len(pairs))
		}
		for _, e := range [][2]string{{"pods", "workloads"}, {"namespaces", "workloads"}, {"service-info", "all-services"}, {"workloads", "node-load"}, {"endpoints", "xds-endpoints"}} {
			sel := fmt.Sprintf(`#edges path[data-from=%q][data-to=%q]`, e[0], e[1])
			if !eval[bool](b, fmt.Sprintf(`!!document.querySelector(%q)`, sel)) {
				t.Errorf("edge %s -> %s not drawn", e[0], e[1])
			}
		}
		// Left to right: every source (static) left of every derived
		// collection, and inputs left of what they feed.
		xs := eval[map[string]float64](b, `Object.fromEntries([...document.querySelectorAll('#nodes g.node')].map(n => [n.dataset.name, n.transform.baseVal.consolidate().matrix.e]))`)
		kinds := map[string]string{}
		for _, c := range info.Collections {
			kinds[c.Name] = c.Kind
		}
		maxStatic, minDerived := -1e9, 1e9
		for name, x := range xs {
			if kinds[name] == "static" {
				maxStatic = max(maxStatic, x)
			} else {
				minDerived = min(minDerived, x)
			}
		}
		if maxStatic >= minDerived {
			t.Errorf("a static collection (x up to %.0f) is not left of every derived one (x from %.0f)", maxStatic, minDerived)
		}
		if !(xs["pods"] < xs["workloads"] && xs["workloads"] < xs["endpoints"] && xs["endpoints"] < xs["xds-endpoints"]) {
			t.Errorf("pods, workloads, endpoints, xds-endpoints not left to right: %v %v %v %v", xs["pods"], xs["workloads"], xs["endpoints"], xs["xds-endpoints"])
		}
		// Failing collections stand out, with their error count.
		for _, name := range []string{"tls-contexts", "route-validation"} {
			cls := eval[string](b, fmt.Sprintf(`document.querySelector(%q).getAttribute('class')`, nodeSel(name)))
			badge := eval[string](b, fmt.Sprintf(`document.querySelector(%q).textContent`, nodeSel(name)+" .badge-text"))
			if !strings.Contains(cls, "failing") || badge != "1" {
				t.Errorf("%s: class %q, badge %q; want failing with 1", name, cls, badge)
			}
		}
		if cls := eval[string](b, fmt.Sprintf(`document.querySelector(%q).getAttribute('class')`, nodeSel("pods"))); strings.Contains(cls, "failing") {
			t.Errorf("pods marked failing: %q", cls)
		}
	})

	t.Run("click a node", func(t *testing.T) {
		b := b.on(t)
		b.run(chromedp.Click(chromedp.CSS(nodeSel("pods"))))
		b.waitJS("pods' items", `document.querySelectorAll('#p-items details.item').length === 12`)
		if got := eval[string](b, `document.getElementById('p-name').textContent`); got != "pods" {
			t.Errorf("panel shows %q, want pods", got)
		}
		if got := eval[string](b, `document.getElementById('p-items-count').textContent`); got != "12" {
			t.Errorf("item count %q, want 12", got)
		}
		down := eval[string](b, `document.getElementById('p-down').innerText`)
		if !strings.Contains(down, "workloads") || !strings.Contains(down, "namespace-stats") {
			t.Errorf("downstreams %q, want workloads and namespace-stats", down)
		}
		if first := eval[string](b, `document.querySelector('#p-items details.item summary').textContent`); first != "default/api-02" {
			t.Errorf("first item %q, want default/api-02", first)
		}
		// Filter by prefix.
		b.run(chromedp.SendKeys(chromedp.CSS("#p-prefix"), "shop/"))
		b.waitJS("filtered items", `document.querySelectorAll('#p-items details.item').length === 4 && document.getElementById('p-items-count').textContent === '4'`)
	})

	t.Run("pages of items", func(t *testing.T) {
		b := b.on(t)
		b.run(chromedp.Click(chromedp.CSS(nodeSel("configmaps"))))
		b.waitJS("the first page", `document.querySelectorAll('#p-items details.item').length === 50 && document.querySelector('#p-pager .range').textContent === '1–50 of 120'`)
		b.run(chromedp.Click(chromedp.CSS(`#p-next`)))
		b.waitJS("the second page", `document.querySelector('#p-pager .range').textContent === '51–100 of 120'`)
		if first := eval[string](b, `document.querySelector('#p-items details.item summary').textContent`); first != "default/settings-050" {
			t.Errorf("second page starts at %q, want default/settings-050", first)
		}
		b.run(chromedp.Click(chromedp.CSS(`#p-next`)))
		b.waitJS("the last page", `document.querySelectorAll('#p-items details.item').length === 20 && document.getElementById('p-next').disabled`)
		b.run(chromedp.Click(chromedp.CSS(`#p-prev`)))
		b.waitJS("back to the second page", `document.querySelector('#p-pager .range').textContent === '51–100 of 120'`)
		// Back to pods, filtered as before, for the live update.
		b.run(chromedp.Click(chromedp.CSS(nodeSel("pods"))))
		b.waitJS("pods' items", `document.querySelectorAll('#p-items details.item').length === 12`)
		b.run(chromedp.SendKeys(chromedp.CSS("#p-prefix"), "shop/"))
		b.waitJS("filtered items", `document.querySelectorAll('#p-items details.item').length === 4`)
	})

	t.Run("live update", func(t *testing.T) {
		b := b.on(t)
		if got := eval[string](b, `document.querySelector('#nodes g.node[data-name="pods"] .size').textContent`); got != "12 items" {
			t.Fatalf("pods node says %q, want 12 items", got)
		}
		f.pods.Set(fxPod{Name: "cart-99", Namespace: "shop", Node: "node-2", IP: "10.0.0.99", Labels: map[string]string{"app": "cart"}})
		b.waitJS("the pods node to grow", `document.querySelector('#nodes g.node[data-name="pods"] .size').textContent === '13 items'`)
		b.waitJS("the workloads node to grow", `document.querySelector('#nodes g.node[data-name="workloads"] .size').textContent === '13 items'`)
		b.waitJS("the open item list to grow", `document.querySelectorAll('#p-items details.item').length === 5`)
		b.waitJS("the new event in the panel", `document.getElementById('p-events').innerText.includes('shop/cart-99')`)
		if eval[int](b, `window.__noReload`) != 1 {
			t.Error("the page reloaded")
		}

		// A collection created while the page is open is laid out anew.
		krt.NewCollection(f.g, f.pods, func(ctx krt.HandlerContext, p fxPod) *fxNamed {
			return &fxNamed{Key: p.ResourceName(), Info: p.IP}
		}, krt.WithName("late-collection"))
		b.waitJS("the new node", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, len(f.names)+1))
		b.waitJS("its edge", `!!document.querySelector('#edges path[data-from="pods"][data-to="late-collection"]')`)
		if got := eval[string](b, `document.querySelector('#nodes g.node[data-name="late-collection"] .size').textContent`); got != "13 items" {
			t.Errorf("the new node says %q, want 13 items", got)
		}
		if !eval[bool](b, `document.querySelector('#nodes g.node[data-name="pods"]').classList.contains('selected')`) {
			t.Error("the selection was lost in the new layout")
		}
	})

	t.Run("errors with stacks", func(t *testing.T) {
		b := b.on(t)
		b.run(chromedp.Click(chromedp.CSS(nodeSel("route-validation"))))
		b.waitJS("the recorded panic", `document.querySelectorAll('#p-errors details.err').length === 1`)
		if s := eval[string](b, `document.querySelector('#p-errors details.err summary').textContent`); !strings.Contains(s, "negative weight") {
			t.Errorf("error summary %q, want the panic message", s)
		}
		if eval[bool](b, `document.querySelector('#p-errors details.err').open`) {
			t.Error("stack shown before it was asked for")
		}
		b.run(chromedp.Click(chromedp.CSS(`#p-errors details.err summary`)))
		if s := eval[string](b, `document.querySelector('#p-errors details.err pre.stack').innerText`); !strings.Contains(s, "goroutine") {
			t.Errorf("stack %q, want a goroutine trace", s)
		}
	})

	t.Run("explain", func(t *testing.T) {
		b := b.on(t)
		b.run(
			chromedp.SetValue(chromedp.CSS("#explain-key"), "default/api"),
			chromedp.Click(chromedp.CSS(`#explain-form button[type="submit"]`)),
		)
		b.waitJS("four explanations", `document.querySelectorAll('.explain-card').length === 4`)
		card := eval[string](b, `document.querySelector('.explain-card[data-collection="endpoints"]').innerText`)
		for _, want := range []string{"default/api", "all-services", "workloads", "10.0.0.2"} {
			if !strings.Contains(card, want) {
				t.Errorf("endpoints explanation %q lacks %q", card, want)
			}
		}
		if !eval[bool](b, `document.querySelector('#nodes g.node[data-name="workloads"]').classList.contains('explained')`) {
			t.Error("the collections read are not highlighted")
		}
		b.run(
			chromedp.SetValue(chromedp.CSS("#explain-key"), "default/nope"),
			chromedp.Click(chromedp.CSS(`#explain-form button[type="submit"]`)),
		)
		b.waitJS("not found", `!!document.getElementById('explain-error') && document.getElementById('explain-error').textContent.includes('not found')`)
	})

	t.Run("proxies", func(t *testing.T) {
		b := b.on(t)
		b.run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="proxies"]`)))
		b.waitJS("two proxies", `document.querySelectorAll('#proxies .proxy').length === 2`)
		verdicts := eval[[]string](b, `[...document.querySelectorAll('#proxies .proxy .proxy-head .verdict')].map(v => v.textContent)`)
		if !slices.Equal(verdicts, []string{"up to date", "rejecting config"}) {
			t.Errorf("verdicts %v", verdicts)
		}
		if r := eval[string](b, `document.querySelector('#proxies .proxy.v-rejecting tr.rejecting .nack-reason').textContent`); r != nackReason {
			t.Errorf("NACK reason %q, want %q", r, nackReason)
		}
		b.run(chromedp.Click(chromedp.CSS(`#proxies .proxy.v-rejecting .dump-btn`)))
		b.waitJS("the config dump", `document.getElementById('dump-body').textContent.includes('outbound|web')`)

		// A disconnect shows without a reload.
		ps := proxies.Proxies()
		ps[0].State, ps[0].DisconnectedAt = ProxyDisconnected, time.Now()
		proxies.set(ps)
		b.waitJS("the disconnect", `!!document.querySelector('#proxies .proxy.v-disconnected')`)
		ps[0].State = ProxyConnected
		proxies.set(ps)
		b.waitJS("the reconnect", `!document.querySelector('#proxies .proxy.v-disconnected')`)
	})

	t.Run("problems", func(t *testing.T) {
		b := b.on(t)
		b.run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="problems"]`)))
		b.waitJS("the problem", `document.querySelectorAll('#problems tbody tr').length === 1`)
		if row := eval[string](b, `document.querySelector('#problems tbody tr').innerText`); !strings.Contains(row, "config/routes.yaml") || !strings.Contains(row, "mapping values") {
			t.Errorf("problem row %q", row)
		}
	})

	if eval[int](b, `window.__noReload`) != 1 {
		t.Error("the page reloaded during the test")
	}
	if os.Getenv(screenshotEnv) == "1" {
		screenshots(t, b)
	}
	t.Run("replica badge", func(t *testing.T) { testReplicaBadge(t, b.on(t)) })
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
}

// testReplicaBadge opens the page of a replica that leads, then loses the
// Lease to another, then wins it back, and checks the header's badge and
// its tooltip at each step, without a reload.
func testReplicaBadge(t *testing.T, b *browser) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	leading := Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Leading: true, Leader: "meshd-0_1a2b", Since: since, Terms: 1}
	rep := newFakeReplica(leading)
	ui := New(newFixture().g, WithReplica(rep.get), WithPollInterval(50*time.Millisecond))
	srv := httptest.NewServer(ui)
	defer srv.Close()
	defer ui.Close() // end the page's event stream before srv.Close waits for it

	b.run(chromedp.Navigate(srv.URL + ui.UIPath()))
	b.waitJS("the graph", `document.querySelectorAll('#nodes g.node').length > 0`)
	eval[int](b, `window.__noReload = 2`)
	badge := func() (role, text, title string, visible bool) {
		role = eval[string](b, `document.getElementById('replica').dataset.role`)
		text = eval[string](b, `document.getElementById('replica').textContent`)
		title = eval[string](b, `document.getElementById('replica').title`)
		visible = eval[bool](b, `document.getElementById('replica').checkVisibility()`)
		return
	}

	b.waitJS("the leader badge", `document.getElementById('replica').dataset.role === 'leader'`)
	role, text, title, visible := badge()
	if !visible || text != "leader" {
		t.Errorf("leading replica: badge %q (visible %v), want a visible \"leader\"", text, visible)
	}
	for _, want := range []string{"lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-0_1a2b, since ", "terms won by this replica: 1"} {
		if !strings.Contains(title, want) {
			t.Errorf("leading replica: tooltip %q lacks %q", title, want)
		}
	}
	// The leader stands out from a standby.
	leaderBorder := eval[string](b, `getComputedStyle(document.getElementById('replica')).borderColor`)

	// Another replica takes the Lease: the badge follows without a reload.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Leader: "meshd-1_3c4d", Since: since.Add(time.Minute), Terms: 1})
	b.waitJS("the standby badge", `document.getElementById('replica').dataset.role === 'standby'`)
	role, text, title, visible = badge()
	if !visible || text != "standby · leader: meshd-1_3c4d" {
		t.Errorf("standby: badge %q (role %s, visible %v), want \"standby · leader: meshd-1_3c4d\"", text, role, visible)
	}
	for _, want := range []string{"lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-1_3c4d, since ", "terms won by this replica: 1", "stands by"} {
		if !strings.Contains(title, want) {
			t.Errorf("standby: tooltip %q lacks %q", title, want)
		}
	}
	if border := eval[string](b, `getComputedStyle(document.getElementById('replica')).borderColor`); border == leaderBorder {
		t.Errorf("the standby badge looks like the leader's (border %s)", border)
	}

	// Before any holder is seen, the standby says so.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Terms: 1})
	b.waitJS("no leader seen", `document.getElementById('replica').textContent === 'standby · no leader seen yet'`)

	// It wins a second term.
	leading.Terms = 2
	rep.set(leading)
	b.waitJS("the leader badge again", `document.getElementById('replica').textContent === 'leader' && document.getElementById('replica').title.includes('terms won by this replica: 2')`)
	if eval[int](b, `window.__noReload`) != 2 {
		t.Error("the page reloaded")
	}
}

// screenshots saves the graph with a node's panel open and the proxies tab.
func screenshots(t *testing.T, b *browser) {
	eval[string](b, `document.getElementById('explain-key').value = ''`)
	dir := filepath.Join("..", "..", "..", "..", "docs", "img")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := func(name string) {
		b.run(chromedp.Sleep(300 * time.Millisecond)) // let the pulse animation settle
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", filepath.Join(dir, name))
	}
	b.run(
		chromedp.Click(chromedp.CSS(`.tab-button[data-tab="graph"]`)),
		chromedp.Click(chromedp.CSS(`#fit`)),
	)
	b.run(chromedp.Click(chromedp.CSS(nodeSel("endpoints"))))
	b.waitJS("endpoints' items", `document.querySelectorAll('#p-items details.item').length === 6`)
	b.run(chromedp.Click(chromedp.CSS(`#p-items details.item summary`)))
	shot("debug-ui.png")
	b.run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="proxies"]`)))
	b.waitJS("two proxies", `document.querySelectorAll('#proxies .proxy').length === 2`)
	shot("debug-ui-proxies.png")
}
