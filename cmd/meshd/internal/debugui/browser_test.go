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
	"go.uber.org/goleak"

	"github.com/meshd/meshd/cmd/meshd/internal/headless"
	"github.com/meshd/meshd/krt"
)

// nodeSel selects the graph node of a collection.
func nodeSel(name string) string { return fmt.Sprintf(`#nodes g.node[data-name=%q]`, name) }

func TestBrowser(t *testing.T) {
	exe := headless.Chromium()
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
	// An error and a warning.
	problems := append(newFakeProblems(now), fakeProblems{{Source: "config/mesh.yaml", Object: "Service shop/cart",
		Error: "port 8080 has no name; treated as TCP", Since: now.Add(-time.Minute), Severity: "warning"}}...)
	ui := New(f.g, WithProxies(proxies), WithProblems(problems), WithPollInterval(50*time.Millisecond))
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix(), ui)
	mux.Handle("/", ui.RedirectHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer ui.Close() // end the page's event stream before srv.Close waits for it

	start := time.Now()
	b := headless.Start(t, exe)
	// Through the root redirect to the page.
	b.Run(chromedp.Navigate(srv.URL + "/"))
	b.WaitJS("every node drawn", fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, len(f.names)))
	t.Logf("browser started and drew the graph in %v", time.Since(start).Round(time.Millisecond))
	if got := headless.Eval[string](b, `location.pathname`); got != "/debug/ui" {
		t.Errorf("page at %s, want /debug/ui", got)
	}
	headless.Eval[int](b, `window.__noReload = 1`)

	t.Run("modules", func(t *testing.T) { testModules(t, b.On(t)) })

	t.Run("no replica badge", func(t *testing.T) {
		b := b.On(t)
		// Without leader election the page learns there is no replica
		// view, and shows no badge.
		b.WaitJS("the replica view's absence", `document.getElementById('replica').dataset.role === 'none'`)
		if headless.Eval[bool](b, `document.getElementById('replica').checkVisibility()`) {
			t.Errorf("a replica badge shows without leader election: %q", headless.Eval[string](b, `document.getElementById('replica').textContent`))
		}
	})

	t.Run("graph", func(t *testing.T) {
		b := b.On(t)
		names := headless.Eval[[]string](b, `[...document.querySelectorAll('#nodes g.node')].map(n => n.dataset.name).sort()`)
		if !slices.Equal(names, f.sortedNames()) {
			t.Errorf("nodes %v, want %v", names, f.sortedNames())
		}
		labels := headless.Eval[[]string](b, `[...document.querySelectorAll('#nodes g.node text.name')].map(n => n.textContent).sort()`)
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
		if got := headless.Eval[int](b, `document.querySelectorAll('#edges path.edge').length`); got != len(pairs) {
			t.Errorf("%d edges drawn, want %d", got, len(pairs))
		}
		for _, e := range [][2]string{{"pods", "workloads"}, {"namespaces", "workloads"}, {"service-info", "all-services"}, {"workloads", "node-load"}, {"endpoints", "xds-endpoints"}} {
			sel := fmt.Sprintf(`#edges path[data-from=%q][data-to=%q]`, e[0], e[1])
			if !headless.Eval[bool](b, fmt.Sprintf(`!!document.querySelector(%q)`, sel)) {
				t.Errorf("edge %s -> %s not drawn", e[0], e[1])
			}
		}
		// Left to right: every source (static) left of every derived
		// collection, and inputs left of what they feed.
		xs := headless.Eval[map[string]float64](b, `Object.fromEntries([...document.querySelectorAll('#nodes g.node')].map(n => [n.dataset.name, n.transform.baseVal.consolidate().matrix.e]))`)
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
		// Zoom changes the view's scale; Fit brings back the fitted view.
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
		// Failing collections stand out, with their error count.
		for _, name := range []string{"tls-contexts", "route-validation"} {
			cls := headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).getAttribute('class')`, nodeSel(name)))
			badge := headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).textContent`, nodeSel(name)+" .badge-text"))
			if !strings.Contains(cls, "failing") || badge != "1" {
				t.Errorf("%s: class %q, badge %q; want failing with 1", name, cls, badge)
			}
		}
		if cls := headless.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).getAttribute('class')`, nodeSel("pods"))); strings.Contains(cls, "failing") {
			t.Errorf("pods marked failing: %q", cls)
		}
	})

	t.Run("click a node", func(t *testing.T) {
		b := b.On(t)
		b.Run(chromedp.Click(chromedp.CSS(nodeSel("pods"))))
		b.WaitJS("pods' items", `document.querySelectorAll('#p-items details.item').length === 12`)
		if got := headless.Eval[string](b, `document.getElementById('p-name').textContent`); got != "pods" {
			t.Errorf("panel shows %q, want pods", got)
		}
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
	})

	t.Run("pages of items", func(t *testing.T) {
		b := b.On(t)
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
	})

	t.Run("live update", func(t *testing.T) {
		b := b.On(t)
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
	})

	t.Run("errors with stacks", func(t *testing.T) {
		b := b.On(t)
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
	})

	t.Run("close the panel", func(t *testing.T) {
		b := b.On(t)
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
		b.Run(chromedp.Click(chromedp.CSS(nodeSel("services"))))
		b.WaitJS("the services panel", `document.getElementById('p-name').textContent === 'services' && `+open)
		b.Run(chromedp.KeyEvent("\x1b")) // Escape
		b.WaitJS("the panel to close on Escape", `document.getElementById('panel').hidden`)
	})

	t.Run("explain", func(t *testing.T) {
		b := b.On(t)
		b.Run(
			chromedp.SetValue(chromedp.CSS("#explain-key"), "default/api"),
			chromedp.Click(chromedp.CSS(`#explain-form button[type="submit"]`)),
		)
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
		b.Run(
			chromedp.SetValue(chromedp.CSS("#explain-key"), "default/nope"),
			chromedp.Click(chromedp.CSS(`#explain-form button[type="submit"]`)),
		)
		b.WaitJS("not found", `!!document.getElementById('explain-error') && document.getElementById('explain-error').textContent.includes('not found')`)
	})

	t.Run("proxies", func(t *testing.T) {
		b := b.On(t)
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
	})

	t.Run("problems", func(t *testing.T) {
		b := b.On(t)
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
		if n, bad := headless.Eval[string](b, `document.getElementById('problems-count').textContent`), headless.Eval[bool](b, `document.getElementById('problems-count').classList.contains('bad')`); n != "2" || !bad {
			t.Errorf("problems count %q (bad %v), want a red 2", n, bad)
		}
	})

	if headless.Eval[int](b, `window.__noReload`) != 1 {
		t.Error("the page reloaded during the test")
	}
	t.Run("replica badge", func(t *testing.T) { testReplicaBadge(t, b.On(t)) })
	if errs := b.PageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
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
	badge := func() (role, text, title string, visible bool) {
		role = headless.Eval[string](b, `document.getElementById('replica').dataset.role`)
		text = headless.Eval[string](b, `document.getElementById('replica').textContent`)
		title = headless.Eval[string](b, `document.getElementById('replica').title`)
		visible = headless.Eval[bool](b, `document.getElementById('replica').checkVisibility()`)
		return
	}

	b.WaitJS("the leader badge", `document.getElementById('replica').dataset.role === 'leader'`)
	role, text, title, visible := badge()
	if !visible || text != "leader" || role != "leader" {
		t.Errorf("leading replica: badge %q (role %s, visible %v), want a visible \"leader\"", text, role, visible)
	}
	for _, want := range []string{"lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-0_1a2b, since ", "terms won by this replica: 1"} {
		if !strings.Contains(title, want) {
			t.Errorf("leading replica: tooltip %q lacks %q", title, want)
		}
	}
	// The leader stands out from a standby.
	leaderBorder := headless.Eval[string](b, `getComputedStyle(document.getElementById('replica')).borderColor`)

	// Another replica takes the Lease: the badge follows without a reload.
	rep.set(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0_1a2b", Leader: "meshd-1_3c4d", Since: since.Add(time.Minute), Terms: 1})
	b.WaitJS("the standby badge", `document.getElementById('replica').dataset.role === 'standby'`)
	role, text, title, visible = badge()
	if !visible || text != "standby · leader: meshd-1_3c4d" {
		t.Errorf("standby: badge %q (role %s, visible %v), want \"standby · leader: meshd-1_3c4d\"", text, role, visible)
	}
	for _, want := range []string{"lease: mesh-system/meshd", "this replica: meshd-0_1a2b", "leader: meshd-1_3c4d, since ", "terms won by this replica: 1", "stands by"} {
		if !strings.Contains(title, want) {
			t.Errorf("standby: tooltip %q lacks %q", title, want)
		}
	}
	if border := headless.Eval[string](b, `getComputedStyle(document.getElementById('replica')).borderColor`); border == leaderBorder {
		t.Errorf("the standby badge looks like the leader's (border %s)", border)
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
