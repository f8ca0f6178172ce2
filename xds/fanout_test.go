package xds_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// TestFanOut connects many raw SotW streams, each subscribed to one of ten
// CLAs and to a shared one, changes one CLA and then the shared one: every
// stream receives the shared change, and only the subscribers of the first
// CLA receive it.
func TestFanOut(t *testing.T) {
	streams, perConn := 1000, 100
	if testing.Short() || raceEnabled {
		streams = 200
	}
	const groups = 10
	f := newFixture(t)
	for i := range groups {
		f.eds.Set(cla(fmt.Sprintf("c-%d", i), "10.0.0.1:80"))
	}
	f.eds.Set(cla("shared", "10.0.0.1:80"))

	clients := openFanOutStreams(t, f, streams, perConn, groups)
	waitFor(t, "every stream registered", func() bool { return f.srv.Stats().ConnectedProxies == streams })
	before := f.srv.Stats()

	f.eds.Set(cla("c-3", "10.0.0.33:80"))
	f.eds.Set(cla("shared", "10.0.0.2:80"))
	receivedC3 := recvFanOutChange(t, clients, groups)
	if want := streams / groups; receivedC3 != want {
		t.Fatalf("%d streams received c-3, want %d", receivedC3, want)
	}
	after := f.srv.Stats()
	if sent := after.ResourcesSent["eds"] - before.ResourcesSent["eds"]; sent != uint64(streams+streams/groups) {
		t.Fatalf("sent %d CLAs, want %d", sent, streams+streams/groups)
	}
}

// forEach runs fn for every client concurrently and fails on the first
// error.
func forEach(t *testing.T, clients []*xdstest.SotW, fn func(i int, c *xdstest.SotW) error) {
	t.Helper()
	errs := make(chan error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fn(i, c)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDebounceCoalesces writes a burst of changes to one CLA with a long
// debounce: the stream receives the last value, in fewer pushes than
// writes.
func TestDebounceCoalesces(t *testing.T) {
	f := newFixture(t, xds.WithPushMode(xds.PushDebounce), xds.WithDebounce(time.Hour), xds.WithMaxDelay(300*time.Millisecond))
	f.eds.Set(cla("a", "10.0.0.1:80"))
	c := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "node-1"})
	c.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"a"}})
	c.Ack(c.Recv(), "a")
	const writes = 20
	for i := range writes {
		f.eds.Set(cla("a", fmt.Sprintf("10.0.1.%d:80", i)))
	}
	pushes := 0
	for {
		r := c.Recv()
		pushes++
		if claOf(t, r.Resources, "a").Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address == fmt.Sprintf("10.0.1.%d", writes-1) {
			break
		}
	}
	if pushes >= writes {
		t.Fatalf("%d pushes for %d writes: nothing coalesced", pushes, writes)
	}
}

// TestStuckClient keeps one stream from reading while large load
// assignments change many times: another stream still receives every
// change, and the stuck stream's pending set holds one entry per name, not
// one per change.
func TestStuckClient(t *testing.T) {
	f := newFixture(t)
	big := func(v int) *endpointv3.ClusterLoadAssignment {
		addrs := make([]string, 2000)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("10.%d.%d.%d:80", v%256, i/256, i%256)
		}
		return cla("big", addrs...)
	}
	f.eds.Set(big(0))

	// The stuck stream subscribes and never reads.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stuck, err := discovery.NewAggregatedDiscoveryServiceClient(dial(t, f.addr)).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stuck.Send(&discovery.DiscoveryRequest{Node: &corev3.Node{Id: "stuck"}, TypeUrl: xds.EndpointType, ResourceNames: []string{"big"}}); err != nil {
		t.Fatal(err)
	}
	live := xdstest.NewSotW(t, dial(t, f.addr), &corev3.Node{Id: "live"})
	live.Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{"big"}})
	live.Ack(live.Recv(), "big")
	waitFor(t, "the stuck stream's subscription", func() bool {
		for _, p := range f.srv.Proxies() {
			if p.NodeID == "stuck" && p.Connected {
				return p.Types[xds.EndpointType].Pushes > 0
			}
		}
		return false // its request is not read yet
	})

	// Each change is about 40 KB: a few fill the stuck stream's flow
	// control windows and its sends block.
	const changes = 40
	for v := 1; v <= changes; v++ {
		f.eds.Set(big(v))
		want := fmt.Sprintf("10.%d.0.0", v)
		for {
			r := live.Recv()
			live.Ack(r, "big")
			if claOf(t, r.Resources, "big").Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address == want {
				break
			}
		}
	}
	p := proxyByNode(t, f.srv, "stuck")
	ts := p.Types[xds.EndpointType]
	if ts.Pending > 1 || ts.Pushes >= changes {
		t.Fatalf("stuck stream: %d pending, %d pushes for %d changes", ts.Pending, ts.Pushes, changes)
	}
	if !p.Behind {
		t.Fatalf("stuck stream not flagged behind: %+v", p)
	}
}

// openFanOutStreams opens streams SotW streams, perConn to a connection,
// stream i subscribed to c-(i%groups) and shared, and waits until every
// stream has its two CLAs.
func openFanOutStreams(t *testing.T, f *fixture, streams, perConn, groups int) []*xdstest.SotW {
	t.Helper()
	var conns []*grpc.ClientConn
	for i := 0; i < streams; i += perConn {
		conns = append(conns, dial(t, f.addr))
	}
	clients := make([]*xdstest.SotW, streams)
	for i := range clients {
		clients[i] = xdstest.NewSotW(t, conns[i/perConn], &corev3.Node{Id: fmt.Sprintf("node-%d", i)})
		clients[i].Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: []string{fmt.Sprintf("c-%d", i%groups), "shared"}})
	}
	// Every stream gets its two CLAs.
	forEach(t, clients, func(i int, c *xdstest.SotW) error {
		got := map[string]bool{}
		for len(got) < 2 {
			r := c.Recv()
			for _, n := range names(t, r) {
				got[n] = true
			}
			c.Ack(r, fmt.Sprintf("c-%d", i%groups), "shared")
		}
		return nil
	})
	return clients
}

// recvFanOutChange receives the push of a change to c-3 and shared on
// every stream, failing if a stream receives a CLA it did not subscribe
// to, and returns how many streams received c-3.
func recvFanOutChange(t *testing.T, clients []*xdstest.SotW, groups int) int {
	t.Helper()
	var mu sync.Mutex
	receivedC3 := 0
	forEach(t, clients, func(i int, c *xdstest.SotW) error {
		// The two changes reach a stream in two responses, in commit
		// order, or in one: read until it has both that it should
		// receive.
		gotC3, gotShared, wantC3 := false, false, i%groups == 3
		for !gotShared || (wantC3 && !gotC3) {
			if gotShared {
				return fmt.Errorf("stream %d (group %d) received shared before c-3, committed first", i, i%groups)
			}
			r := c.Recv()
			for _, n := range names(t, r) {
				switch n {
				case "c-3":
					gotC3 = true
				case "shared":
				default:
					return fmt.Errorf("stream %d received %s", i, n)
				}
			}
			if claOf(t, r.Resources, "shared") != nil {
				gotShared = true
			}
		}
		if gotC3 != wantC3 {
			return fmt.Errorf("stream %d (group %d) received c-3: %v", i, i%groups, gotC3)
		}
		if gotC3 {
			mu.Lock()
			receivedC3++
			mu.Unlock()
		}
		return nil
	})
	return receivedC3
}
