package debugui

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/meshd/meshd/cmd/meshd/internal/headless"
)

// testNodeLabels checks that every node shows its whole name inside its
// box: a long name widens its node instead of being cut.
func testNodeLabels(t *testing.T, b *headless.Browser) {
	type label struct {
		Name, Text    string
		Right, RoomTo float64
	}
	labels := headless.Eval[[]label](b, `[...document.querySelectorAll('#nodes g.node')].map(g => {
		const t = g.querySelector('text.name');
		return { Name: g.dataset.name, Text: t.textContent, Right: t.getBBox().x + t.getComputedTextLength(),
			RoomTo: +g.querySelector('rect.box').getAttribute('width') - 20 };
	})`)
	var long bool
	for _, l := range labels {
		if l.Text != l.Name {
			t.Errorf("node %s is labelled %q", l.Name, l.Text)
		}
		if l.Right > l.RoomTo {
			t.Errorf("node %s: its label ends at %.0f, past its box's room (%.0f)", l.Name, l.Right, l.RoomTo)
		}
		long = long || l.Name == longName
	}
	if !long {
		t.Errorf("no node %s", longName)
	}
}

// wantPanelBesideGraph checks that the open side panel covers no part of
// the graph, and that the node of the named collection is in the graph's
// visible part.
func wantPanelBesideGraph(t *testing.T, b *headless.Browser, name string) {
	t.Helper()
	b.WaitJS("the panel beside the graph, "+name+" in sight", fmt.Sprintf(`(() => {
		const g = document.getElementById('graph').getBoundingClientRect();
		const p = document.getElementById('panel').getBoundingClientRect();
		const n = document.querySelector(%q).getBoundingClientRect();
		return p.width > 0 && p.left >= g.right - 1 && n.left >= g.left && n.right <= g.right && n.top >= g.top && n.bottom <= g.bottom;
	})()`, nodeSel(name)))
}

// testDeepLinks checks the URLs of a collection, an explanation, a proxy
// and a tab: choosing one sets the page's URL, and opening that URL, or
// reloading the page, shows it again.
func testDeepLinks(t *testing.T, exe, page string, nodes int, proxies *fakeProxies) {
	b := openGraphPage(t, exe, page, nodes)
	reload := func(what string) {
		b.Run(chromedp.Reload())
		b.WaitJS("every node drawn after reloading "+what, fmt.Sprintf(`document.querySelectorAll('#nodes g.node').length === %d`, nodes))
	}
	const panelOf = `!document.getElementById('panel').hidden && document.getElementById('p-name').textContent === `

	clickNode(b, "services")
	b.WaitJS("the services link", `location.hash === '#/collection/services'`)
	reload("a collection")
	b.WaitJS("the services panel after a reload", panelOf+`'services'`)
	wantPanelBesideGraph(t, b, "services")

	b.Run(chromedp.Navigate(page + "#/collection/" + url.PathEscape(longName)))
	b.WaitJS("the panel a link names", panelOf+fmt.Sprintf("%q", longName))

	explain := page + "#/explain/default%2Fapi?in=endpoints"
	b.Run(chromedp.Navigate(explain))
	const oneCard = `document.querySelectorAll('.explain-card').length === 1 && !!document.querySelector('.explain-card[data-collection="endpoints"]')`
	b.WaitJS("the explanation a link names", oneCard)
	reload("an explanation")
	b.WaitJS("the explanation after a reload", oneCard+` && document.getElementById('explain-key').value === 'default/api'`)

	id := proxies.Proxies()[1].NodeID
	b.Run(chromedp.Navigate(page + "#/proxy/" + url.PathEscape(id)))
	focused := fmt.Sprintf(`document.body.dataset.tab === 'proxies' && document.querySelector('#proxies .proxy.focused')?.dataset.node === %q`, id)
	b.WaitJS("the proxy a link names", focused)
	reload("a proxy")
	b.WaitJS("the proxy after a reload", focused)
	if got := headless.Eval[string](b, `document.querySelector('#proxies .proxy.focused a.node-link').getAttribute('href')`); got != "#/proxy/"+url.PathEscape(id) {
		t.Errorf("the proxy's own link is %q", got)
	}

	b.Run(chromedp.Click(chromedp.CSS(`.tab-button[data-tab="problems"]`)))
	b.WaitJS("the problems link", `location.hash === '#/problems'`)
	reload("a tab")
	b.WaitJS("the problems tab after a reload", `document.body.dataset.tab === 'problems'`)
	b.Run(chromedp.Navigate(page + "#/clusters"))
	b.WaitJS("the clusters tab a link names", `document.body.dataset.tab === 'clusters' && document.querySelectorAll('#clusters tbody tr').length === 3`)
	b.Run(chromedp.Navigate(page + "#/"))
	b.WaitJS("the graph again", `document.body.dataset.tab === 'graph' && document.getElementById('panel').hidden`)
}

// clickNode clicks the node of the named collection once it has stopped
// moving: opening or closing the side panel refits the graph.
func clickNode(b *headless.Browser, name string) {
	b.WaitJS(name+" at rest", fmt.Sprintf(`(() => {
		const r = JSON.stringify(document.querySelector(%q).getBoundingClientRect());
		const still = window.__nodeRect === r;
		window.__nodeRect = r;
		return still;
	})()`, nodeSel(name)))
	b.Run(chromedp.Click(chromedp.CSS(nodeSel(name))))
}
