package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// Each test here runs the binary on loopback, causes one fault, and checks
// that an operator sees it in all three places: the log, a /metrics
// series, and the debug UI's JSON API (what the browser UI renders), and
// that meshd keeps serving the last good configuration meanwhile.

// startDir runs meshd on a copy of the demo mesh plus files, and waits
// until it is ready.
func startDir(t *testing.T, files map[string]string, mod func(*Config)) (*running, string) {
	t.Helper()
	dir := copyDemo(t)
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
		"--push-debounce", "10ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(&cfg)
	}
	r := start(t, cfg)
	r.waitReady(t)
	return r, dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until the log holds every one of wants on one line.
func (r *running) waitLog(t *testing.T, what string, wants ...string) string {
	t.Helper()
	return waitFor(t, what+" in the log", func() (string, bool) {
		for _, line := range strings.Split(r.log.String(), "\n") {
			ok := true
			for _, w := range wants {
				ok = ok && strings.Contains(line, w)
			}
			if ok {
				return line, true
			}
		}
		return r.log.String(), false
	})
}

// TestFaultMalformedManifest breaks a file that served a cluster.
func TestFaultMalformedManifest(t *testing.T) {
	r, dir := startDir(t, map[string]string{"ratings.yaml": ratingsService}, nil)
	ads := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "reader"}, true)
	first := ads.Recv()
	ads.Ack(first)
	if names := clusterNames(t, first); !slices.Contains(names, ratingsCluster) {
		t.Fatalf("clusters = %v, want %s", names, ratingsCluster)
	}

	const services = `meshd_krt_collection_size{collection="folder/Service",kind="static"}`
	servicesBefore := r.waitMetric(t, services, func(float64) bool { return true })

	path := filepath.Join(dir, "ratings.yaml")
	writeFile(t, path, "apiVersion: v1\nkind: Service\nmetadata:\n  name: ratings\n   namespace: [shop\n")

	// Log: the rejection, naming the file.
	r.waitLog(t, "the rejected file", "level=ERROR", "manifest rejected", path)

	// API: the problem, with the file's path.
	var probs debugui.ProblemsResult
	waitFor(t, "the problem in /debug/api/problems", func() (string, bool) {
		r.getJSON(t, "/debug/api/problems", &probs)
		for _, p := range probs.Problems {
			if strings.HasPrefix(p.Source, path) && p.Error != "" {
				return "", true
			}
		}
		return "", false
	})

	// Metrics: the problem counts; the file's objects are still there.
	t.Run("metrics", func(t *testing.T) {
		r.waitMetric(t, `meshd_source_problems{severity="error"}`, func(v float64) bool { return v >= 1 })
	})
	if v := r.waitMetric(t, services, func(float64) bool { return true }); v != servicesBefore {
		t.Errorf("folder/Service holds %v services after the bad edit, want %v: ratings kept", v, servicesBefore)
	}

	// Last good config: still ready, and a new proxy still gets ratings.
	if code, _ := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d after a bad edit, want 200", code)
	}
	late := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "late"}, true)
	if names := clusterNames(t, late.Recv()); !slices.Contains(names, ratingsCluster) {
		t.Errorf("after the bad edit, a new proxy gets %v, want %s kept", names, ratingsCluster)
	}

	// Fixed, the problem goes away.
	writeFile(t, path, ratingsService)
	waitFor(t, "the problem to clear", func() (string, bool) {
		_, body := r.get(t, "/debug/api/problems")
		return body, !strings.Contains(body, path)
	})
}

// TestFaultNackingProxy has a proxy reject a push.
func TestFaultNackingProxy(t *testing.T) {
	r, dir := startDir(t, nil, nil)
	_, before := r.get(t, "/metrics")
	nacksBefore, ok := metric(before, `meshd_xds_nacks_total{type="cds"}`)
	if !ok {
		t.Fatalf("/metrics lacks meshd_xds_nacks_total{type=\"cds\"}")
	}

	const nodeID, reason = "nacker", "nack-test: cluster ratings: unsupported lb_policy"
	ads := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: nodeID}, true)
	good := ads.Recv()
	ads.Ack(good)
	writeFile(t, filepath.Join(dir, "ratings.yaml"), ratingsService)
	bad := recvCluster(t, ads, ratingsCluster)
	ads.Nack(bad, reason) // names the version last ACKed: good's

	// Log: the rejection, with the proxy and its reason.
	r.waitLog(t, "the NACK", "level=WARN", "rejected config", nodeID, reason)

	// Metrics: the NACK is counted and the proxy is rejecting.
	r.waitMetric(t, `meshd_xds_nacks_total{type="cds"}`, func(v float64) bool { return v == nacksBefore+1 })
	r.waitMetric(t, "meshd_xds_rejecting_proxies", func(v float64) bool { return v == 1 })

	// API: the proxy is rejecting, with the reason and the name held back.
	p := r.proxy(t, nodeID, "rejecting", func(p debugui.ProxyEntry) bool { return p.Verdict == "rejecting" })
	i := slices.IndexFunc(p.Types, func(ts debugui.TypeStatus) bool { return ts.TypeURL == xds.ClusterType })
	if i < 0 {
		t.Fatalf("proxy %+v has no CDS status", p)
	}
	cds := p.Types[i]
	if cds.LastNACK == nil || cds.LastNACK.Reason != reason || cds.LastNACK.Nonce != bad.GetNonce() {
		t.Errorf("CDS last NACK = %+v, want reason %q for nonce %s", cds.LastNACK, reason, bad.GetNonce())
	}
	if cds.AckedVersion != good.GetVersionInfo() {
		t.Errorf("CDS acked version = %q, want the last good %q", cds.AckedVersion, good.GetVersionInfo())
	}
	if !slices.Contains(cds.Rejected, ratingsCluster) {
		t.Errorf("CDS rejected = %v, want %s", cds.Rejected, ratingsCluster)
	}

	// Last good config: the proxy's dump holds what it accepted, not what
	// it rejected.
	_, dump := r.get(t, "/debug/api/proxies/"+nodeID+"/config")
	if !strings.Contains(dump, reviewsCluster) || strings.Contains(dump, ratingsCluster) {
		t.Errorf("config dump after the NACK: want %s and not %s; got %.500s", reviewsCluster, ratingsCluster, dump)
	}
}

// servicePorts is the item of the test's own collection: a service's
// port count.
type servicePorts struct {
	Key   string `json:"key"`
	Ports int    `json:"ports"`
}

func (s servicePorts) ResourceName() string { return s.Key }

const faultCollection = "fault/service-ports"

// panicky adds, through Config.Extend as a program embedding meshd would,
// a collection whose transformation panics on services labeled
// fault=panic.
func panicky(m *Model) error {
	krt.NewCollection(m.Graph, m.Inputs.Services, func(ctx krt.HandlerContext, s *corev1.Service) *servicePorts {
		if s.Labels["fault"] == "panic" {
			panic("fault test: cannot count the ports of " + s.Name)
		}
		return &servicePorts{Key: s.Namespace + "/" + s.Name, Ports: len(s.Spec.Ports)}
	}, krt.WithName(faultCollection))
	return nil
}

const boomService = `apiVersion: v1
kind: Service
metadata:
  name: boom
  namespace: shop
  labels: {%s}
spec:
  selector:
    app: boom
  ports:
  - {name: http, port: 80}
%s`

// TestFaultPanickingTransformation has a transformation panic on one
// input, after it had succeeded for it.
func TestFaultPanickingTransformation(t *testing.T) {
	r, dir := startDir(t, map[string]string{"boom.yaml": fmt.Sprintf(boomService, "", "")}, func(c *Config) { c.Extend = panicky })
	items := func() debugui.ItemsPage {
		var page debugui.ItemsPage
		r.getJSON(t, collectionPath(faultCollection)+"/items?prefix=shop/boom", &page)
		return page
	}
	if page := items(); len(page.Items) != 1 || !strings.Contains(string(page.Items[0].Value), `"ports":1`) {
		t.Fatalf("before the fault: items %+v, want shop/boom with 1 port", page)
	}
	ads := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "reader"}, true)
	ads.Ack(ads.Recv())

	// Two ports and the label: the transformation panics on boom.
	writeFile(t, filepath.Join(dir, "boom.yaml"), fmt.Sprintf(boomService, "fault: panic", "  - {name: grpc, port: 81}\n"))

	// Log: the error, naming the collection and the input, with the panic.
	r.waitLog(t, "the panic", "level=ERROR", "collection error", faultCollection, "shop/boom", "panic: fault test")

	// Metrics: the error is counted, the input is failing.
	series := `{collection="` + faultCollection + `",kind="collection"}`
	r.waitMetric(t, "meshd_krt_collection_errors_total"+series, func(v float64) bool { return v >= 1 })
	r.waitMetric(t, "meshd_krt_collection_failing_inputs"+series, func(v float64) bool { return v == 1 })

	checkPanicInAPI(t, r)

	// Last good output: boom keeps its 1-port item; the rest of meshd
	// serves on (boom's second port reaches xDS: the fault is confined).
	if page := items(); len(page.Items) != 1 || !strings.Contains(string(page.Items[0].Value), `"ports":1`) {
		t.Errorf("after the fault: items %+v, want shop/boom's last good item (1 port)", page)
	}
	if code, _ := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d after a panic, want 200", code)
	}
	ads.Ack(recvCluster(t, ads, "outbound|81||boom.shop.svc.cluster.local"))
}

// checkPanicInAPI checks that the debug API shows the panic of
// faultCollection on shop/boom: in the graph, in the collection's recent
// errors with its stack, and in explain.
func checkPanicInAPI(t *testing.T, r *running) {
	t.Helper()
	var graph debugui.GraphSummary
	r.getJSON(t, "/debug/api/graph", &graph)
	i := slices.IndexFunc(graph.Collections, func(c debugui.CollectionSummary) bool { return c.Name == faultCollection })
	if i < 0 {
		t.Fatalf("the graph lacks %s", faultCollection)
	}
	if c := graph.Collections[i]; c.Errors < 1 || c.FailingInputs != 1 || !strings.Contains(c.LastError, "fault test") {
		t.Errorf("graph shows %s as %+v, want its error and one failing input", faultCollection, c)
	}
	var detail debugui.CollectionDetail
	r.getJSON(t, collectionPath(faultCollection), &detail)
	if n := len(detail.RecentErrors); n == 0 {
		t.Errorf("%s has no recent errors", faultCollection)
	} else if e := detail.RecentErrors[n-1]; e.Key != "shop/boom" || !strings.Contains(e.Stack, "panicky") {
		t.Errorf("recent error %+v, want key shop/boom and a stack through panicky", e)
	}
	var explain debugui.ExplainResult
	r.getJSON(t, "/debug/api/explain?key=shop/boom&collection="+faultCollection, &explain)
	if len(explain.Results) != 1 || explain.Results[0].LastError == nil || !strings.Contains(explain.Results[0].LastError.Error, "fault test") {
		t.Errorf("explain shop/boom = %+v, want the failing input's error", explain)
	}
}

// recvCluster reads the responses of s, ACKing each, until one holds
// cluster, and returns that one unanswered.
func recvCluster(t *testing.T, s *xdstest.SotW, cluster string) *discoveryv3.DiscoveryResponse {
	t.Helper()
	for {
		resp := s.Recv()
		if slices.Contains(clusterNames(t, resp), cluster) {
			return resp
		}
		s.Ack(resp)
	}
}

// TestFaultSlowProxy has a proxy that never reads its stream next to one
// that does.
func TestFaultSlowProxy(t *testing.T) {
	r, dir := startDir(t, nil, nil)
	dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "stuck"}, false)
	live := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "live"}, true)
	live.Ack(live.Recv())

	// A change reaches the live proxy although the stuck one holds its
	// responses unread.
	writeFile(t, filepath.Join(dir, "ratings.yaml"), ratingsService)
	live.Ack(recvCluster(t, live, ratingsCluster))

	// Metrics and API say the same: no stale proxy while the stuck one's
	// response is younger than staleAfter (a stuck proxy stays stale, so
	// a metric read before an API answer of "not stale" must be 0), one
	// once the API calls it stale.
	before := r.waitMetric(t, "meshd_xds_stale_proxies", func(float64) bool { return true })
	if p := r.proxy(t, "stuck", "listed", func(debugui.ProxyEntry) bool { return true }); p.State != debugui.ProxyStale && before != 0 {
		t.Errorf("meshd_xds_stale_proxies = %v while the UI calls no proxy stale", before)
	}
	p := r.proxy(t, "stuck", "stale", func(p debugui.ProxyEntry) bool { return p.State == debugui.ProxyStale })
	if p.Verdict != "stale" {
		t.Errorf("stuck proxy verdict = %q, want stale", p.Verdict)
	}
	r.waitMetric(t, "meshd_xds_stale_proxies", func(v float64) bool { return v == 1 })
	r.proxy(t, "live", "up to date", func(p debugui.ProxyEntry) bool { return p.Verdict == "up-to-date" })

	// Log: one warning names the stuck proxy, none the live one.
	var warned int
	for _, line := range strings.Split(r.log.String(), "\n") {
		if strings.Contains(line, "not answering") {
			if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "stuck") {
				t.Errorf("log line %q: want a WARN naming the stuck proxy", line)
			}
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d log lines about an unanswering proxy, want 1:\n%s", warned, r.log.String())
	}
}
