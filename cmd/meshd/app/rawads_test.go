package app

import (
	"bufio"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// dialADS opens a SotW stream on a connection of its own as node (creds
// nil: plaintext) and asks for every cluster. With read false its
// responses are never read: it stands for a proxy that stopped reading.
// The stream and connection close at the end of the test.
func dialADS(t *testing.T, addr string, creds credentials.TransportCredentials, node *corev3.Node, read bool) *xdstest.SotW {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() }) // after the stream's own cleanup
	opts := []xdstest.Option{xdstest.WithBuffer(16)}
	if !read {
		opts = append(opts, xdstest.Unread())
	}
	c := xdstest.NewSotW(t, cc, node, opts...)
	c.Send(&discoveryv3.DiscoveryRequest{TypeUrl: xds.ClusterType})
	return c
}

// clusterNames returns the sorted names of the clusters in r.
func clusterNames(t *testing.T, r *discoveryv3.DiscoveryResponse) []string {
	t.Helper()
	var names []string
	for _, a := range r.GetResources() {
		var cl clusterv3.Cluster
		if err := a.UnmarshalTo(&cl); err != nil {
			t.Fatal(err)
		}
		names = append(names, cl.GetName())
	}
	slices.Sort(names)
	return names
}

// metric returns the value of the series written exactly as series (name
// and labels, as /metrics prints them) and whether it is there.
func metric(body, series string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// waitMetric polls /metrics until series satisfies ok, and returns its
// value.
func (r *running) waitMetric(t *testing.T, series string, ok func(float64) bool) float64 {
	t.Helper()
	var v float64
	waitFor(t, "/metrics "+series, func() (string, bool) {
		_, body := r.get(t, "/metrics")
		var found bool
		v, found = metric(body, series)
		return series + " = " + strconv.FormatFloat(v, 'g', -1, 64), found && ok(v)
	})
	return v
}

// proxies returns the debug UI's proxies API answer.
func (r *running) proxies(t *testing.T) debugui.ProxiesResult {
	t.Helper()
	var res debugui.ProxiesResult
	r.getJSON(t, "/debug/api/proxies", &res)
	return res
}

// proxy waits until the proxies API shows nodeID and ok accepts it.
func (r *running) proxy(t *testing.T, nodeID, what string, ok func(debugui.ProxyEntry) bool) debugui.ProxyEntry {
	t.Helper()
	var got debugui.ProxyEntry
	waitFor(t, "proxy "+nodeID+" "+what, func() (string, bool) {
		for _, p := range r.proxies(t).Proxies {
			if p.NodeID == nodeID {
				got = p
				b, _ := json.Marshal(p)
				return string(b), ok(p)
			}
		}
		return "not listed", false
	})
	return got
}

// waitProblem polls the problems API until its answer holds every one of
// wants, and returns that answer.
func (r *running) waitProblem(t *testing.T, what string, wants ...string) string {
	t.Helper()
	return waitFor(t, what, func() (string, bool) {
		_, body := r.get(t, "/debug/api/problems")
		for _, w := range wants {
			if !strings.Contains(body, w) {
				return body, false
			}
		}
		return body, true
	})
}

// getJSON fetches path and decodes it into v.
func (r *running) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	code, body := r.get(t, path)
	if code != 200 {
		t.Fatalf("GET %s = %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v in %.300s", path, err, body)
	}
}

// collectionPath is the debug API path of a collection's route.
func collectionPath(name string) string {
	return "/debug/api/collections/" + url.PathEscape(name)
}

// TestMaxConnectionAgeFlag: --xds-max-connection-age reaches the xDS
// server: a stream that outlives the age and its grace is closed.
func TestMaxConnectionAgeFlag(t *testing.T) {
	cfg := DefaultConfig()
	cfg.XDSMaxConnectionAge, cfg.XDSConnectionAgeGrace = 300*time.Millisecond, 100*time.Millisecond
	r := start(t, cfg)
	r.waitReady(t)
	c := dialADS(t, r.app.XDSAddr(), nil, &corev3.Node{Id: "aging"}, true)
	c.Ack(c.Recv())
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.Responses():
			if !ok {
				return // closed by the server: the age took effect
			}
		case <-deadline:
			t.Fatal("the stream outlived its connection age by 10s")
		}
	}
}
