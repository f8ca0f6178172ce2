package main

import (
	"context"
	"fmt"
	"os"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/xds"
)

// What a SotW and a Delta stream share: the connection, one goroutine
// sending what the client queues, and one receiving and handling.

// openStream dials addr and opens a stream with open (a method of the ADS
// client: StreamAggregatedResources or DeltaAggregatedResources), keeping
// its connection, the cancel of its context and a new done channel in c
// for drop.
func openStream[S any](c *client, ctx context.Context, addr string,
	open func(discovery.AggregatedDiscoveryServiceClient, context.Context, ...grpc.CallOption) (S, error)) (S, error) {
	cc, err := dial(addr, c.f.staticWindows)
	if err != nil {
		var none S
		return none, err
	}
	sctx, cancel := context.WithCancel(ctx)
	stream, err := open(discovery.NewAggregatedDiscoveryServiceClient(cc), sctx, grpc.WaitForReady(true))
	if err != nil {
		cancel()
		cc.Close()
		var none S
		return none, err
	}
	c.cc, c.cancel, c.done = cc, cancel, make(chan struct{})
	return stream, nil
}

// sendAll sends the requests queued on out until drop closes it.
func sendAll[Req any](send func(Req) error, out <-chan Req) {
	for req := range out {
		if err := send(req); err != nil {
			// Drain until drop closes out: the receiving
			// goroutine must never block on it.
			for range out {
			}
			return
		}
	}
}

// receive hands each response of the stream to handle, counting it in the
// fleet, until the stream ends; then it closes c.done.
func receive[Resp proto.Message](c *client, recv func() (Resp, error), handle func(Resp) error) {
	defer close(c.done)
	for {
		resp, err := recv()
		if err != nil {
			if status.Code(err) != codes.Canceled {
				fmt.Fprintf(os.Stderr, "client: stream ended: %v\n", err)
			}
			return
		}
		c.f.bytes.Add(int64(proto.Size(resp)))
		c.f.msgs.Add(1)
		if err := handle(resp); err != nil {
			metric.Fatalf("client: %v", err)
		}
		c.f.last.Store(time.Now().UnixNano())
	}
}

// opener returns c's openSotW, or with delta its openDelta.
func (c *client) opener(delta bool) func(ctx context.Context, addr string, again, resume bool) error {
	if delta {
		return c.openDelta
	}
	return c.openSotW
}

// heldNames is what a client asks for of each type on a new stream: the
// names it holds (nil for a wildcard type), Listeners first.
func (c *client) heldNames() []typeNames {
	return []typeNames{
		{xds.ListenerType, c.listeners},
		{xds.RouteType, c.routes},
		{xds.ClusterType, c.cdsNames},
		{xds.EndpointType, c.clusters},
	}
}

// typeNames is a type URL and names of that type.
type typeNames struct {
	typeURL string
	names   []string
}
