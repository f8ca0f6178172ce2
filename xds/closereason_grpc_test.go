package xds_test

import (
	"context"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/meshd/meshd/xds"
)

// TestCloseReasonCancelAndReconnect: a grpc-go client cancels its stream
// and opens another under the same node id. The registry shows one proxy,
// connected, with the cancelled stream in its history; once the second
// stream ends too, still one, disconnected, with the first in its history.
func TestCloseReasonCancelAndReconnect(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(cla("a", "10.0.0.1:80"))
	cc := dial(t, f.addr)
	cancel := subscribeEDS(t, cc, "flapping")
	first := proxyByNode(t, f.srv, "flapping").ID
	cancel()
	gone := waitGone(t, f.srv, "flapping")
	if gone.CloseReason != xds.CloseClientCancelled {
		t.Errorf("close reason after a cancel = %q, want %q", gone.CloseReason, xds.CloseClientCancelled)
	}

	cancel = subscribeEDS(t, cc, "flapping")
	ps := byNode(f.srv, "flapping")
	if len(ps) != 1 || !ps[0].Connected {
		t.Fatalf("after the reconnect, flapping is %+v; want one connected proxy", ps)
	}
	if h := ps[0].History; len(h) != 1 || h[0].ID != first || h[0].CloseReason != xds.CloseClientCancelled || h[0].DisconnectedAt.IsZero() {
		t.Errorf("history after the reconnect = %+v; want the cancelled stream %d", h, first)
	}
	cancel()
	last := waitGone(t, f.srv, "flapping")
	if ps := byNode(f.srv, "flapping"); len(ps) != 1 {
		t.Errorf("after both streams ended, flapping is %d proxies, want 1", len(ps))
	}
	if h := last.History; len(h) != 1 || h[0].ID != first {
		t.Errorf("history of the last stream = %+v; want only the first stream %d", h, first)
	}
}

// TestCloseReasonTransportClosed: a grpc-go client closes its connection.
func TestCloseReasonTransportClosed(t *testing.T) {
	f := newFixture(t)
	f.eds.Set(cla("a", "10.0.0.1:80"))
	cc := dial(t, f.addr)
	subscribeEDS(t, cc, "closer")
	cc.Close()
	if got := waitGone(t, f.srv, "closer").CloseReason; got != xds.CloseTransportClosed {
		t.Errorf("close reason after the client closed its connection = %q, want %q", got, xds.CloseTransportClosed)
	}
}

// TestCloseReasonConnectionAge: the server ends a connection at its
// maximum age, and its stream after the grace.
func TestCloseReasonConnectionAge(t *testing.T) {
	f := newFixture(t, xds.WithMaxConnectionAge(300*time.Millisecond, 100*time.Millisecond))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	subscribeEDS(t, dial(t, f.addr), "aging")
	if got := waitGone(t, f.srv, "aging").CloseReason; got != xds.CloseConnectionAge {
		t.Errorf("close reason at the maximum age = %q, want %q", got, xds.CloseConnectionAge)
	}
}

// TestCloseReasonKeepaliveTimeout: a grpc-go client behind a proxy that
// stops forwarding, as a hung machine, answers no keepalive ping.
func TestCloseReasonKeepaliveTimeout(t *testing.T) {
	// A ping answered within a second even on a loaded machine, so that
	// the client is not dropped before it hangs.
	f := newFixture(t, xds.WithKeepalive(
		keepalive.ServerParameters{Time: 500 * time.Millisecond, Timeout: time.Second},
		keepalive.EnforcementPolicy{MinTime: time.Minute, PermitWithoutStream: true}))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	fz := newFreezer(t, f.addr)
	subscribeEDS(t, dial(t, fz.addr()), "hung")
	fz.freeze()
	if got := waitGone(t, f.srv, "hung").CloseReason; got != xds.CloseKeepaliveTimeout {
		t.Errorf("close reason for a hung client = %q, want %q", got, xds.CloseKeepaliveTimeout)
	}
}

// subscribeEDS opens a SotW stream as node, subscribes it to the
// endpoints "a" and waits for them; the returned func cancels the stream.
func subscribeEDS(t *testing.T, cc *grpc.ClientConn, node string) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := discovery.NewAggregatedDiscoveryServiceClient(cc).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := &discovery.DiscoveryRequest{Node: &corev3.Node{Id: node}, TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}}
	if err := s.Send(req); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	return cancel
}

// byNode returns the registry's entries for node.
func byNode(s *xds.Server, node string) []xds.ProxyStatus {
	var out []xds.ProxyStatus
	for _, p := range s.Proxies() {
		if p.NodeID == node {
			out = append(out, p)
		}
	}
	return out
}

// waitGone waits until node's entry is disconnected, and returns it.
func waitGone(t *testing.T, s *xds.Server, node string) xds.ProxyStatus {
	t.Helper()
	var p xds.ProxyStatus
	waitFor(t, node+" disconnected", func() bool {
		ps := byNode(s, node)
		if len(ps) == 1 && !ps[0].Connected {
			p = ps[0]
			return true
		}
		return false
	})
	return p
}
