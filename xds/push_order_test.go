package xds_test

import (
	"fmt"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestPushOrder writes load assignments a and b in turn, one transaction
// each, under a short push window, while streams subscribed to both ACK
// every response: whatever rounds the pacing makes of the writes, after
// every response a stream holds what one transaction committed, never an
// earlier one than it held, and so never a change of b before the change
// of a committed ahead of it.
func TestPushOrder(t *testing.T) {
	const streams, writes = 20, 60
	f := newFixture(t, xds.WithPushWindow(5*time.Millisecond))
	f.eds.Set(cla("a", orderAddr(0)), cla("b", orderAddr(0)))
	clients := openOrderStreams(t, f, streams)

	// committed maps what each transaction left, the versions of a and
	// b, to its number; write k sets a when k is odd, b when even.
	committed := map[[2]int]int{{0, 0}: 0}
	var state [2]int
	for k := 1; k <= writes; k++ {
		state[1-k%2] = k
		committed[state] = k
	}
	final := state
	go func() {
		for k := 1; k <= writes; k++ {
			f.eds.Set(cla([]string{"b", "a"}[k%2], orderAddr(k)))
			time.Sleep(time.Millisecond)
		}
	}()
	forEach(t, clients, func(i int, c *xdstest.SotW) error {
		var held [2]int
		last := 0
		for held != final {
			r := c.Recv()
			if err := orderHeld(r, &held); err != nil {
				return fmt.Errorf("stream %d: %w", i, err)
			}
			k, ok := committed[held]
			if !ok || k < last {
				return fmt.Errorf("stream %d holds a %d, b %d after transaction %d: no transaction since committed that", i, held[0], held[1], last)
			}
			last = k
			c.Ack(r, "a", "b")
		}
		return nil
	})
}

// openOrderStreams opens n SotW streams subscribed to a and b and takes
// their first responses.
func openOrderStreams(t *testing.T, f *fixture, n int) []*xdstest.SotW {
	t.Helper()
	conns := []*grpc.ClientConn{dial(t, f.addr), dial(t, f.addr)}
	clients := make([]*xdstest.SotW, n)
	for i := range clients {
		clients[i] = xdstest.NewSotW(t, conns[i%len(conns)], &corev3.Node{Id: fmt.Sprintf("node-%d", i)})
		clients[i].Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a", "b"}})
	}
	forEach(t, clients, func(i int, c *xdstest.SotW) error {
		var held [2]int
		for got := 0; got < 2; {
			r := c.Recv()
			if err := orderHeld(r, &held); err != nil {
				return err
			}
			got += len(r.Resources)
			c.Ack(r, "a", "b")
		}
		return nil
	})
	return clients
}

// orderAddr is the address that stands for write k.
func orderAddr(k int) string { return fmt.Sprintf("10.0.%d.%d:80", k/256, k%256) }

// orderHeld applies a response to held, the writes of a and b a stream
// holds.
func orderHeld(r *discovery.DiscoveryResponse, held *[2]int) error {
	for _, a := range r.Resources {
		var c endpointv3.ClusterLoadAssignment
		if err := a.UnmarshalTo(&c); err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		var hi, lo int
		addr := c.GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
		if _, err := fmt.Sscanf(addr, "10.0.%d.%d", &hi, &lo); err != nil {
			return fmt.Errorf("address %s of %s: %w", addr, c.GetClusterName(), err)
		}
		switch c.GetClusterName() {
		case "a":
			held[0] = hi*256 + lo
		case "b":
			held[1] = hi*256 + lo
		default:
			return fmt.Errorf("load assignment %s, never asked for", c.GetClusterName())
		}
	}
	return nil
}
