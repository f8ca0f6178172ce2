package app

import (
	"bufio"
	"context"
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
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/xds"
)

// rawADS is a SotW ADS stream driven by hand: the test decides what to
// ACK, what to NACK, and whether responses are read at all.
type rawADS struct {
	t      *testing.T
	stream grpc.BidiStreamingClient[discoveryv3.DiscoveryRequest, discoveryv3.DiscoveryResponse]
	resps  chan *discoveryv3.DiscoveryResponse // nil when the stream is never read
}

// dialADS opens a stream as node (creds nil: plaintext) and, if read,
// receives its responses in a goroutine; a stream that is not read stands
// for a proxy that stopped reading. It is closed at the end of the test.
func dialADS(t *testing.T, addr string, creds credentials.TransportCredentials, node *corev3.Node, read bool) *rawADS {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		cancel()
		cc.Close()
		t.Fatal(err)
	}
	c := &rawADS{t: t, stream: stream}
	done := make(chan struct{})
	if read {
		c.resps = make(chan *discoveryv3.DiscoveryResponse, 16)
		go func() {
			defer close(done)
			defer close(c.resps)
			for {
				r, err := stream.Recv()
				if err != nil {
					return
				}
				select {
				case c.resps <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	} else {
		close(done)
	}
	t.Cleanup(func() {
		cancel()
		<-done
		cc.Close()
	})
	c.send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: xds.ClusterType})
	return c
}

func (c *rawADS) send(r *discoveryv3.DiscoveryRequest) {
	c.t.Helper()
	if err := c.stream.Send(r); err != nil {
		c.t.Fatalf("ADS send: %v", err)
	}
}

// recv waits for the next response.
func (c *rawADS) recv() *discoveryv3.DiscoveryResponse {
	c.t.Helper()
	select {
	case r, ok := <-c.resps:
		if !ok {
			c.t.Fatal("ADS stream closed")
		}
		return r
	case <-time.After(20 * time.Second):
		c.t.Fatal("no ADS response within 20s")
		return nil
	}
}

// ack accepts r.
func (c *rawADS) ack(r *discoveryv3.DiscoveryResponse) {
	c.t.Helper()
	c.send(&discoveryv3.DiscoveryRequest{TypeUrl: r.GetTypeUrl(), VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()})
}

// nack rejects r with reason, as Envoy does: the version is the last one
// accepted, the nonce r's.
func (c *rawADS) nack(r *discoveryv3.DiscoveryResponse, acceptedVersion, reason string) {
	c.t.Helper()
	c.send(&discoveryv3.DiscoveryRequest{TypeUrl: r.GetTypeUrl(), VersionInfo: acceptedVersion, ResponseNonce: r.GetNonce(),
		ErrorDetail: &status.Status{Code: 3, Message: reason}})
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
	c.ack(c.recv())
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.resps:
			if !ok {
				return // closed by the server: the age took effect
			}
		case <-deadline:
			t.Fatal("the stream outlived its connection age by 10s")
		}
	}
}
