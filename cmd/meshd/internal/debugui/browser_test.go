package debugui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshd/meshd/cmd/meshd/internal/headless"
	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/multicluster"
)

// nodeSel selects the graph node of a collection.
func nodeSel(name string) string { return fmt.Sprintf(`#nodes g.node[data-name=%q]`, name) }

// browserStep is one step of TestBrowser: a subtest run on the open page.
type browserStep struct {
	name string
	run  func(t *testing.T, b *headless.Browser)
}

// TestBrowser opens the debug UI in Chromium and runs its steps, in order,
// on one page, which must not reload or report errors.
func TestBrowser(t *testing.T) {
	exe := headless.NeedChromium(t)
	// Registered first, so it runs after the browser's cleanup.
	t.Cleanup(func() { leakcheck.VerifyNone(t) })

	now, f := time.Now(), newFixture()
	proxies, clusters := newFakeProxies(now), newFakeClusters(now)
	// A warning, then an error about the httproutes node: the UI lists
	// the error first.
	problems := append(fakeProblems{{Source: "config/mesh.yaml", Object: "Service shop/cart",
		Error: "port 8080 has no name; treated as TCP", Since: now.Add(-time.Minute), Severity: "warning"}}, newFakeProblems(now)...)
	problems[1].Collection = "httproutes"
	ui := New(f.g, WithProxies(proxies), WithProblems(problems), WithClusters("home", clusters.get), WithPollInterval(50*time.Millisecond))
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix(), ui)
	mux.Handle("/", ui.RedirectHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer ui.Close() // end the page's event stream before srv.Close waits for it

	b := openGraphPage(t, exe, srv.URL+"/", len(f.names))
	withFixture := func(check func(*testing.T, *headless.Browser, *fixture)) func(*testing.T, *headless.Browser) {
		return func(t *testing.T, b *headless.Browser) { check(t, b, f) }
	}
	for _, step := range []browserStep{
		{"modules", testModules},
		{"no replica badge", testNoReplicaBadge},
		{"graph nodes", withFixture(testGraphNodes)},
		{"graph edges", withFixture(testGraphEdges)},
		{"graph layout", withFixture(testGraphLayout)},
		{"node labels", testNodeLabels},
		{"zoom and fit", testZoomAndFit},
		{"failing nodes", testFailingNodes},
		{"click a node", testClickNode},
		{"pages of items", testItemPages},
		{"live update", withFixture(testLiveUpdate)},
		{"errors with stacks", testErrorStacks},
		{"close the panel", testClosePanel},
		{"explain", testExplainForm},
		{"proxies", func(t *testing.T, b *headless.Browser) { testProxiesTab(t, b, proxies) }},
		{"problems", testProblemsTab},
		{"clusters", func(t *testing.T, b *headless.Browser) { testClustersTab(t, b, clusters) }},
	} {
		t.Run(step.name, func(t *testing.T) { step.run(t, b.On(t)) })
	}

	if headless.Eval[int](b, `window.__noReload`) != 1 {
		t.Error("the page reloaded during the test")
	}
	// On a browser of its own: it reloads the page, and its own guard
	// leaves this one's time to the steps above.
	t.Run("deep links", func(t *testing.T) {
		testDeepLinks(t, exe, srv.URL+"/debug/ui", len(f.g.Describe().Collections), proxies)
	})
	t.Run("replica badge", func(t *testing.T) { testReplicaBadge(t, b.On(t)) })
	if errs := b.PageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
}

// openGraphPage starts Chromium, opens url, which must redirect to the
// page, waits until all nodes collections are drawn, and marks the page so
// that a reload shows.
func openGraphPage(t *testing.T, exe, url string, nodes int) *headless.Browser {
	start := time.Now()
	b := headless.Start(t, exe)
	// Through the root redirect to the page.
	b.Run(chromedp.Navigate(url))
	b.WaitJS("every node drawn", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, nodes))
	t.Logf("browser started and drew the graph in %v", time.Since(start).Round(time.Millisecond))
	if got := headless.Eval[string](b, `location.pathname`); got != "/debug/ui" {
		t.Errorf("page at %s, want /debug/ui", got)
	}
	headless.Eval[int](b, `window.__noReload = 1`)
	return b
}

// testNoReplicaBadge checks that, without leader election, the page learns
// there is no replica view, and shows no badge.
func testNoReplicaBadge(t *testing.T, b *headless.Browser) {
	b.WaitJS("the replica view's absence", `document.getElementById('replica').dataset.role === 'none'`)
	if headless.Eval[bool](b, `document.getElementById('replica').checkVisibility()`) {
		t.Errorf("a replica badge shows without leader election: %q", headless.Eval[string](b, `document.getElementById('replica').textContent`))
	}
}

// testGraphNodes checks that every collection is drawn, with its name.
func testGraphNodes(t *testing.T, b *headless.Browser, f *fixture) {
	names := headless.Eval[[]string](b, `[...document.querySelectorAll('#nodes g.node')].map(n => n.dataset.name).sort()`)
	if !slices.Equal(names, f.sortedNames()) {
		t.Errorf("nodes %v, want %v", names, f.sortedNames())
	}
	labels := headless.Eval[[]string](b, `[...document.querySelectorAll('#nodes g.node text.name')].map(n => n.textContent).sort()`)
	if !slices.Equal(labels, f.sortedNames()) {
		t.Errorf("node labels %v, want %v", labels, f.sortedNames())
	}
}

// testGraphEdges checks that one edge is drawn per pair of collections that
// read each other, among them a few known ones.
func testGraphEdges(t *testing.T, b *headless.Browser, f *fixture) {
	pairs := map[[2]int]bool{}
	for _, e := range f.g.Describe().Edges {
		if e.From != e.To {
			pairs[[2]int{e.From, e.To}] = true
		}
	}
	if got := headless.Eval[int](b, `document.querySelectorAll('#edges path.edge').length`); got != len(pairs) {
		t.Errorf("%d edges drawn, want %d", got, len(pairs))
	}
	for _, e := range [][2]string{{"pods", "workloads"}, {"namespaces", "workloads"}, {"service-info", "all-services"}, {"workloads", "node-load"}, {"endpoints", "xds-endpoints"}} {
		sel := fmt.Sprintf(`#edges path[data-from=%q][data-to=%q]`, e[0], e[1])
		if !headless.Eval[bool](b, fmt.Sprintf(`!!document.querySelector(%q)`, sel)) {
			t.Errorf("edge %s -> %s not drawn", e[0], e[1])
		}
	}
}

// testGraphLayout checks that the graph reads left to right: every source
// (static) left of every derived collection, and inputs left of what they
// feed.
func testGraphLayout(t *testing.T, b *headless.Browser, f *fixture) {
	xs := headless.Eval[map[string]float64](b, `Object.fromEntries([...document.querySelectorAll('#nodes g.node')].map(n => [n.dataset.name, n.transform.baseVal.consolidate().matrix.e]))`)
	kinds := map[string]string{}
	for _, c := range f.g.Describe().Collections {
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
}

// testZoomAndFit checks that zoom changes the view's scale and Fit brings
// back the fitted view.
func testZoomAndFit(t *testing.T, b *headless.Browser) {
	const view = `document.getElementById('viewport').getAttribute('transform')`
	fitted := headless.Eval[string](b, view)
	b.Run(chromedp.Click(chromedp.CSS(`#zoom-in`)))
	if zoomed := headless.Eval[string](b, view); zoomed == fitted || !strings.Contains(zoomed, "scale(") {
		t.Errorf("zoom in: view %q, fitted %q", zoomed, fitted)
	}
	b.Run(chromedp.Click(chromedp.CSS(`#fit`)))
	if got := headless.Eval[string](b, view); got != fitted {
		t.Errorf("after Fit the view is %q, want the fitted %q", got, fitted)
	}
}

// testFailingNodes checks that failing collections stand out, with their
// error count, and others do not.
func testFailingNodes(t *testing.T, b *headless.Browser) {
	nodeClass := func(name string) string {
		return headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).getAttribute('class')`, nodeSel(name)))
	}
	for _, name := range []string{"tls-contexts", "route-validation"} {
		cls := nodeClass(name)
		badge := headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).textContent`, nodeSel(name)+" .badge-text"))
		if !strings.Contains(cls, "failing") || badge != "1" {
			t.Errorf("%s: class %q, badge %q; want failing with 1", name, cls, badge)
		}
	}
	if cls := nodeClass("pods"); strings.Contains(cls, "failing") || strings.Contains(cls, "has-problems") {
		t.Errorf("pods marked failing: %q", cls)
	}
	// A problem naming a collection marks its node and counts on its badge.
	cls := nodeClass("httproutes")
	badge := headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).textContent`, nodeSel("httproutes")+" .badge-text"))
	if !strings.Contains(cls, "has-problems") || badge != "1" {
		t.Errorf("httproutes: class %q, badge %q; want has-problems with 1", cls, badge)
	}
}

// testClickNode checks that clicking a node opens its panel, with its
// items, count and downstreams, and that the prefix filters the items.
func testClickNode(t *testing.T, b *headless.Browser) {
	b.Run(chromedp.Click(chromedp.CSS(nodeSel("pods"))))
	b.WaitJS("pods' items", `document.querySelectorAll('#p-items details.item').length === 12`)
	if got := headless.Eval[string](b, `document.getElementById('p-name').textContent`); got != "pods" {
		t.Errorf("panel shows %q, want pods", got)
	}
	wantPanelBesideGraph(t, b, "pods")
	if got := headless.Eval[string](b, `document.getElementById('p-items-count').textContent`); got != "12" {
		t.Errorf("item count %q, want 12", got)
	}
	down := headless.Eval[string](b, `document.getElementById('p-down').innerText`)
	if !strings.Contains(down, "workloads") || !strings.Contains(down, "namespace-stats") {
		t.Errorf("downstreams %q, want workloads and namespace-stats", down)
	}
	if first := headless.Eval[string](b, `document.querySelector('#p-items details.item summary').textContent`); first != "default/api-02" {
		t.Errorf("first item %q, want default/api-02", first)
	}
	// Filter by prefix.
	b.Run(chromedp.SendKeys(chromedp.CSS("#p-prefix"), "shop/"))
	b.WaitJS("filtered items", `document.querySelectorAll('#p-items details.item').length === 4 && document.getElementById('p-items-count').textContent === '4'`)
}

// testItemPages pages through the 120 config maps, forward and back, and
// leaves pods open and filtered, for the live update.
func testItemPages(t *testing.T, b *headless.Browser) {
	b.Run(chromedp.Click(chromedp.CSS(nodeSel("configmaps"))))
	b.WaitJS("the first page", `document.querySelectorAll('#p-items details.item').length === 50 && document.querySelector('#p-pager .range').textContent === '1–50 of 120'`)
	b.Run(chromedp.Click(chromedp.CSS(`#p-next`)))
	b.WaitJS("the second page", `document.querySelector('#p-pager .range').textContent === '51–100 of 120'`)
	if first := headless.Eval[string](b, `document.querySelector('#p-items details.item summary').textContent`); first != "default/settings-050" {
		t.Errorf("second page starts at %q, want default/settings-050", first)
	}
	b.Run(chromedp.Click(chromedp.CSS(`#p-next`)))
	b.WaitJS("the last page", `document.querySelectorAll('#p-items details.item').length === 20 && document.getElementById('p-next').disabled`)
	b.Run(chromedp.Click(chromedp.CSS(`#p-prev`)))
	b.WaitJS("back to the second page", `document.querySelector('#p-pager .range').textContent === '51–100 of 120'`)
	// Back to pods, filtered as before, for the live update.
	b.Run(chromedp.Click(chromedp.CSS(nodeSel("pods"))))
	b.WaitJS("pods' items", `document.querySelectorAll('#p-items details.item').length === 12`)
	b.Run(chromedp.SendKeys(chromedp.CSS("#p-prefix"), "shop/"))
	b.WaitJS("filtered items", `document.querySelectorAll('#p-items details.item').length === 4`)
}

// testLiveUpdate checks that a new pod, and a collection created while the
// page is open, show without a reload and keep the selection.
func testLiveUpdate(t *testing.T, b *headless.Browser, f *fixture) {
	if got := headless.Eval[string](b, `document.querySelector('#nodes g.node[data-name="pods"] .size').textContent`); got != "12 items" {
		t.Fatalf("pods node says %q, want 12 items", got)
	}
	f.pods.Set(fxPod{Name: "cart-99", Namespace: "shop", Node: "node-2", IP: "10.0.0.99", Labels: map[string]string{"app": "cart"}})
	b.WaitJS("the pods node to grow", `document.querySelector('#nodes g.node[data-name="pods"] .size').textContent === '13 items'`)
	b.WaitJS("the workloads node to grow", `document.querySelector('#nodes g.node[data-name="workloads"] .size').textContent === '13 items'`)
	b.WaitJS("the open item list to grow", `document.querySelectorAll('#p-items details.item').length === 5`)
	b.WaitJS("the new event in the panel", `document.getElementById('p-events').innerText.includes('shop/cart-99')`)
	if headless.Eval[int](b, `window.__noReload`) != 1 {
		t.Error("the page reloaded")
	}

	// A collection created while the page is open is laid out anew.
	krt.NewCollection(f.g, f.pods, func(ctx krt.HandlerContext, p fxPod) *fxNamed {
		return &fxNamed{Key: p.ResourceName(), Info: p.IP}
	}, krt.WithName("late-collection"))
	b.WaitJS("the new node", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, len(f.names)+1))
	b.WaitJS("its edge", `!!document.querySelector('#edges path[data-from="pods"][data-to="late-collection"]')`)
	if got := headless.Eval[string](b, `document.querySelector('#nodes g.node[data-name="late-collection"] .size').textContent`); got != "13 items" {
		t.Errorf("the new node says %q, want 13 items", got)
	}
	if !headless.Eval[bool](b, `document.querySelector('#nodes g.node[data-name="pods"]').classList.contains('selected')`) {
		t.Error("the selection was lost in the new layout")
	}
}

// testErrorStacks checks that a recorded panic shows with its message, and
// its stack only when asked for.
func testErrorStacks(t *testing.T, b *headless.Browser) {
	b.Run(chromedp.Click(chromedp.CSS(nodeSel("route-validation"))))
	b.WaitJS("the recorded panic", `document.querySelectorAll('#p-errors details.err').length === 1`)
	if s := headless.Eval[string](b, `document.querySelector('#p-errors details.err summary').textContent`); !strings.Contains(s, "negative weight") {
		t.Errorf("error summary %q, want the panic message", s)
	}
	if headless.Eval[bool](b, `document.querySelector('#p-errors details.err').open`) {
		t.Error("stack shown before it was asked for")
	}
	b.Run(chromedp.Click(chromedp.CSS(`#p-errors details.err summary`)))
	if s := headless.Eval[string](b, `document.querySelector('#p-errors details.err pre.stack').innerText`); !strings.Contains(s, "goroutine") {
		t.Errorf("stack %q, want a goroutine trace", s)
	}
}

// testClosePanel checks that the close button and Escape close the panel
// and clear the marks on the nodes.
func testClosePanel(t *testing.T, b *headless.Browser) {
	const open = `!document.getElementById('panel').hidden`
	const marked = `document.querySelectorAll('#nodes g.node.selected, #nodes g.node.dim').length`
	if !headless.Eval[bool](b, open) || headless.Eval[int](b, marked) == 0 {
		t.Fatal("no panel open, or no node marked, before closing")
	}
	b.Run(chromedp.Click(chromedp.CSS(`#panel-close`)))
	b.WaitJS("the panel to close", `document.getElementById('panel').hidden`)
	if n := headless.Eval[int](b, marked); n != 0 {
		t.Errorf("%d nodes still selected or dimmed", n)
	}
	clickNode(b, "services")
	b.WaitJS("the services panel", `document.getElementById('p-name').textContent === 'services' && `+open)
	b.Run(chromedp.KeyEvent("\x1b")) // Escape
	b.WaitJS("the panel to close on Escape", `document.getElementById('panel').hidden`)
}

// testExplainForm explains a key through the form, checks the cards and
// the highlighted collections, and then a key that does not exist.
func testExplainForm(t *testing.T, b *headless.Browser) {
	explain := func(key string) {
		b.Run(
			chromedp.SetValue(chromedp.CSS("#explain-key"), key),
			chromedp.Click(chromedp.CSS(`#explain-form button[type="submit"]`)),
		)
	}
	explain("default/api")
	b.WaitJS("four explanations", `document.querySelectorAll('.explain-card').length === 4`)
	card := headless.Eval[string](b, `document.querySelector('.explain-card[data-collection="endpoints"]').innerText`)
	for _, want := range []string{"default/api", "all-services", "workloads", "10.0.0.2"} {
		if !strings.Contains(card, want) {
			t.Errorf("endpoints explanation %q lacks %q", card, want)
		}
	}
	if !headless.Eval[bool](b, `document.querySelector('#nodes g.node[data-name="workloads"]').classList.contains('explained')`) {
		t.Error("the collections read are not highlighted")
	}
	explain("default/nope")
	b.WaitJS("not found", `!!document.getElementById('explain-error') && document.getElementById('explain-error').textContent.includes('not found')`)
}

// testProxiesTab checks the proxies tab: count, summary, verdicts, the
// rejecting proxy's types and NACK reason, its config dump, and a
// disconnect and reconnect shown without a reload.
func testProxiesTab(t *testing.T, b *headless.Browser, proxies *fakeProxies) {
	b.Run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="proxies"]`)))
	b.WaitJS("two proxies", `document.querySelectorAll('#proxies .proxy').length === 2`)
	if n, bad := headless.Eval[string](b, `document.getElementById('proxies-count').textContent`), headless.Eval[bool](b, `document.getElementById('proxies-count').classList.contains('bad')`); n != "2" || !bad {
		t.Errorf("proxies count %q (bad %v), want a red 2", n, bad)
	}
	if s := headless.Eval[string](b, `document.querySelector('#proxies .proxy-summary').textContent`); s != "1 up to date1 rejecting config" {
		t.Errorf("proxy summary %q", s)
	}
	types := headless.Eval[[]string](b, `[...document.querySelectorAll('#proxies .proxy.v-rejecting table.types tbody tr td:first-child')].map(td => td.textContent)`)
	if !slices.Equal(types, []string{"Cluster", "ClusterLoadAssignment", "Listener", "RouteConfiguration"}) {
		t.Errorf("types of the rejecting proxy %v", types)
	}
	verdicts := headless.Eval[[]string](b, `[...document.querySelectorAll('#proxies .proxy .proxy-head .verdict')].map(v => v.textContent)`)
	if !slices.Equal(verdicts, []string{"up to date", "rejecting config"}) {
		t.Errorf("verdicts %v", verdicts)
	}
	// The variant of the resources a proxy is sent shows beside its
	// address, for those sent one.
	heads := headless.Eval[[]string](b, `[...document.querySelectorAll('#proxies .proxy .proxy-head .muted')].map(s => s.textContent)`)
	if !slices.Equal(heads, []string{"web · 127.0.0.1:50001 · delta", "api · 127.0.0.1:50002 · sotw · variant grpc-legacy"}) {
		t.Errorf("proxy heads %q", heads)
	}
	if r := headless.Eval[string](b, `document.querySelector('#proxies .proxy.v-rejecting tr.rejecting .nack-reason').textContent`); r != nackReason {
		t.Errorf("NACK reason %q, want %q", r, nackReason)
	}
	b.Run(chromedp.Click(chromedp.CSS(`#proxies .proxy.v-rejecting .dump-btn`)))
	b.WaitJS("the config dump", `document.getElementById('dump-body').textContent.includes('outbound|web')`)

	// A disconnect shows without a reload.
	ps := proxies.Proxies()
	ps[0].State, ps[0].DisconnectedAt = ProxyDisconnected, time.Now()
	proxies.set(ps)
	b.WaitJS("the disconnect", `!!document.querySelector('#proxies .proxy.v-disconnected')`)
	ps[0].State = ProxyConnected
	proxies.set(ps)
	b.WaitJS("the reconnect", `!document.querySelector('#proxies .proxy.v-disconnected')`)
}

// testProblemsTab checks the problems tab: an error row before a warning
// row with its age, and the count, of errors only.
func testProblemsTab(t *testing.T, b *headless.Browser) {
	b.Run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="problems"]`)))
	b.WaitJS("the problems", `document.querySelectorAll('#problems tbody tr').length === 2`)
	if row := headless.Eval[string](b, `document.querySelector('#problems tbody tr.sev-error').innerText`); !strings.Contains(row, "config/routes.yaml") || !strings.Contains(row, "mapping values") {
		t.Errorf("problem row %q", row)
	}
	warn := headless.Eval[string](b, `document.querySelector('#problems tbody tr.sev-warning').innerText`)
	for _, want := range []string{"config/mesh.yaml", "Service shop/cart", "warning", "has no name", "1m ago"} {
		if !strings.Contains(warn, want) {
			t.Errorf("warning row %q lacks %q", warn, want)
		}
	}
	if first := headless.Eval[string](b, `document.querySelector('#problems tbody tr').className`); first != "sev-error" {
		t.Errorf("first row is %q, want the error", first)
	}
	if n, bad := headless.Eval[string](b, `document.getElementById('problems-count').textContent`), headless.Eval[bool](b, `document.getElementById('problems-count').classList.contains('bad')`); n != "1" || !bad {
		t.Errorf("problems count %q (bad %v), want a red 1: errors only", n, bad)
	}
}

// testClustersTab checks the clusters tab: the local cluster's name, a row
// per remote cluster with its state, times, counts and errors, and a
// state change shown without a reload.
func testClustersTab(t *testing.T, b *headless.Browser, clusters *fakeClusters) {
	b.Run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="clusters"]`)))
	b.WaitJS("the clusters", `document.querySelectorAll('#clusters tbody tr').length === 3`)
	if local := headless.Eval[string](b, `document.querySelector('#clusters .local-cluster').innerText`); local != "Local cluster: home" {
		t.Errorf("local cluster line %q", local)
	}
	row := func(name string) string {
		return headless.Eval[string](b, fmt.Sprintf(`document.querySelector('#clusters tr[data-name=%q]').innerText`, name))
	}
	for name, wants := range map[string][]string{
		"east":  {"stale", "secret meshd-system/remote-east", "failing since 1m ago (7 in a row)", "1h ago", "2m ago", "12 services · 40 pods · 12 slices · 3 nodes", "connection refused", "7 failed requests"},
		"north": {"syncing", "--remote-kubeconfig", "not listed within the sync timeout", "403 Forbidden", "0 pods"},
		"west":  {"synced", "credentials #2", "30m ago", "40 pods", "0 failed requests"},
	} {
		got := row(name)
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("cluster %s: row %q lacks %q", name, got, want)
			}
		}
	}
	if n, bad := headless.Eval[string](b, `document.getElementById('clusters-count').textContent`), headless.Eval[bool](b, `document.getElementById('clusters-count').classList.contains('bad')`); n != "2/3" || !bad {
		t.Errorf("clusters count %q (bad %v), want a red 2/3: the clusters not synced", n, bad)
	}
	stale := headless.Eval[string](b, `getComputedStyle(document.querySelector('#clusters tr[data-name="east"] .cluster-state')).color`)
	synced := headless.Eval[string](b, `getComputedStyle(document.querySelector('#clusters tr[data-name="west"] .cluster-state')).color`)
	if stale == synced {
		t.Errorf("a stale and a synced cluster's state look alike (%s)", stale)
	}

	clusters.setState("east", multicluster.StateSynced)
	b.WaitJS("east synced", `document.querySelector('#clusters tr[data-name="east"]').className === 'state-synced'`)
	if n := headless.Eval[string](b, `document.getElementById('clusters-count').textContent`); n != "1/3" {
		t.Errorf("clusters count %q after east synced, want 1/3", n)
	}
	if got := row("east"); !strings.Contains(got, "(7 in a row), within the stale grace") {
		t.Errorf("cluster east, synced but failing: row %q does not say it is within the stale grace", got)
	}
}

// replicaBadge is what the header's replica badge shows.
type replicaBadge struct {
	role, text, title string
	visible           bool
}

func readReplicaBadge(b *headless.Browser) replicaBadge {
	return replicaBadge{
		role:    headless.Eval[string](b, `document.getElementById('replica').dataset.role`),
		text:    headless.Eval[string](b, `document.getElementById('replica').textContent`),
		title:   headless.Eval[string](b, `document.getElementById('replica').title`),
		visible: headless.Eval[bool](b, `document.getElementById('replica').checkVisibility()`),
	}
}

// wantTooltip reports each of wants that the badge's tooltip lacks.
func (rb replicaBadge) wantTooltip(t *testing.T, who string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(rb.title, want) {
			t.Errorf("%s: tooltip %q lacks %q", who, rb.title, want)
		}
	}
}

// testReplicaBadge opens the page of a replica that leads, then loses the
// Lease to another, then wins it back, and checks the header's badge and
// its tooltip at each step, without a reload.
func testReplicaBadge(t *testing.T, b *headless.Browser) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	leading := Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Leading: true, Leader: "meshd-0_1a2b", Since: since, Terms: 1}
	rep := newFakeReplica(leading)
	ui := New(newFixture().g, WithReplica(rep.get), WithPollInterval(50*time.Millisecond))
	srv := httptest.NewServer(ui)
	defer srv.Close()
	defer ui.Close() // end the page's event stream before srv.Close waits for it

	b.Run(chromedp.Navigate(srv.URL + ui.UIPath()))
	b.WaitJS("the graph", `document.querySelectorAll('#nodes g.node').length > 0`)
	headless.Eval[int](b, `window.__noReload = 2`)

	b.WaitJS("the leader badge", `document.getElementById('replica').dataset.role === 'leader'`)
	rb := readReplicaBadge(b)
	if !rb.visible || rb.text != "leader" || rb.role != "leader" {
		t.Errorf("leading replica: badge %q (role %s, visible %v), want a visible \"leader\"", rb.text, rb.role, rb.visible)
	}
	rb.wantTooltip(t, "leading replica", "lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-0_1a2b, since ", "terms won by this replica: 1")
	// The leader stands out from a standby.
	const border = `getComputedStyle(document.getElementById('replica')).borderColor`
	leaderBorder := headless.Eval[string](b, border)

	// Another replica takes the Lease: the badge follows without a reload.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Leader: "meshd-1_3c4d", Since: since.Add(time.Minute), Terms: 1})
	b.WaitJS("the standby badge", `document.getElementById('replica').dataset.role === 'standby'`)
	rb = readReplicaBadge(b)
	if !rb.visible || rb.text != "standby · leader: meshd-1_3c4d" {
		t.Errorf("standby: badge %q (role %s, visible %v), want \"standby · leader: meshd-1_3c4d\"", rb.text, rb.role, rb.visible)
	}
	rb.wantTooltip(t, "standby", "lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-1_3c4d, since ", "terms won by this replica: 1", "stands by")
	if got := headless.Eval[string](b, border); got == leaderBorder {
		t.Errorf("the standby badge looks like the leader's (border %s)", got)
	}

	// Before any holder is seen, the standby says so.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Terms: 1})
	b.WaitJS("no leader seen", `document.getElementById('replica').textContent === 'standby · no leader seen yet'`)

	// It wins a second term.
	leading.Terms = 2
	rep.set(leading)
	b.WaitJS("the leader badge again", `document.getElementById('replica').textContent === 'leader' && document.getElementById('replica').title.includes('terms won by this replica: 2')`)
	if headless.Eval[int](b, `window.__noReload`) != 2 {
		t.Error("the page reloaded")
	}
}

// testModules checks that the page runs as ES modules that leave nothing
// global, and that the decoder behind every answer (api.js) keeps only the
// fields fields.js declares and reports a declared one that is missing.
func testModules(t *testing.T, b *headless.Browser) {
	if got := headless.Eval[[]string](b, `[...document.scripts].map(s => s.type + ' ' + s.getAttribute('src'))`); !slices.Equal(got, []string{" ui/vendor/dagre.min.js", "module ui/main.js"}) {
		t.Errorf("scripts %q, want dagre and the module main.js", got)
	}
	for _, name := range []string{"state", "showSummary", "selectCollection", "explain", "showProxies", "showProblems", "decode"} {
		if headless.Eval[bool](b, "typeof "+name+" !== 'undefined'") {
			t.Errorf("%s is global", name)
		}
	}
	got := headless.Eval[string](b, `(async () => {
		const { decode } = await import('./ui/api.js');
		const seen = [];
		const log = console.error;
		console.error = (m) => seen.push(String(m));
		try {
			const v = decode('Link', { name: 'pods', extra: 1 }, 'a link');
			const list = decode('[]Link', null, 'links');
			return JSON.stringify({ v, list, seen });
		} finally {
			console.error = log;
		}
	})()`)
	if want := `{"v":{"name":"pods","kind":"","reads":0},"list":[],"seen":["meshd UI: a link: no field kind"]}`; got != want {
		t.Errorf("decode: %s, want %s", got, want)
	}
}
