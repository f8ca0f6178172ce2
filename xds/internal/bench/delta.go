package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/xds"
)

// connectDelta runs client i over a Delta ADS stream: wildcard Listeners
// and Clusters, and subscriptions to the routes and load assignments they
// name, added and dropped as they change. ACKs carry only the nonce.
func (f *fleet) connectDelta(ctx context.Context, addr string, i int) error {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		return err
	}
	stream, err := discovery.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx, grpc.WaitForReady(true))
	if err != nil {
		return err
	}
	c := f.newClient(i)
	out := make(chan *discovery.DeltaDiscoveryRequest, 1024)
	go func() {
		for req := range out {
			if err := stream.Send(req); err != nil {
				return
			}
		}
	}()
	node := &corev3.Node{Id: "client-" + strconv.Itoa(i), Cluster: "bench"}
	out <- &discovery.DeltaDiscoveryRequest{Node: node, TypeUrl: xds.ListenerType, ResourceNamesSubscribe: c.listeners}
	if c.listeners == nil {
		out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType}
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			if status.Code(err) != codes.Canceled {
				fmt.Fprintf(os.Stderr, "client: stream ended: %v\n", err)
			}
			return nil
		}
		f.bytes.Add(int64(proto.Size(resp)))
		f.msgs.Add(1)
		if err := c.handleDelta(resp, out); err != nil {
			fatalf("client: %v", err)
		}
		f.last.Store(time.Now().UnixNano())
	}
}

func (c *client) handleDelta(resp *discovery.DeltaDiscoveryResponse, out chan<- *discovery.DeltaDiscoveryRequest) error {
	raw := c.raw[resp.TypeUrl]
	if raw == nil {
		raw = map[string][]byte{}
		c.raw[resp.TypeUrl] = raw
	}
	for _, r := range resp.Resources {
		b := r.GetResource().GetValue()
		if prev, ok := raw[r.Name]; ok && bytes.Equal(prev, b) {
			continue
		}
		raw[r.Name] = b
		if err := c.decode(resp.TypeUrl, r.Name, b); err != nil {
			return err
		}
	}
	for _, name := range resp.RemovedResources {
		delete(raw, name)
		delete(c.routeOf, name)
		delete(c.edsOf, name)
		delete(c.clusterOf, name)
		if resp.TypeUrl == xds.EndpointType {
			c.hold(name, false)
		}
	}
	out <- &discovery.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}
	switch resp.TypeUrl {
	case xds.ListenerType:
		c.listener = true
		routes := sortedValues(c.routeOf)
		if add, drop := setDiff(c.routes, routes); len(add)+len(drop) > 0 {
			c.routes = routes
			out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.RouteType, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}
		}
	case xds.RouteType:
		if c.listeners != nil {
			cds := c.routeClusters()
			if add, drop := setDiff(c.cdsNames, cds); len(add)+len(drop) > 0 {
				c.cdsNames = cds
				out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}
			}
		}
	case xds.ClusterType:
		clusters := sortedValues(c.edsOf)
		if add, drop := setDiff(c.clusters, clusters); len(add)+len(drop) > 0 {
			c.clusters = clusters
			out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}
		}
	}
	c.markComplete()
	return nil
}

// setDiff returns the names of sorted list b not in sorted list a, and
// those of a not in b.
func setDiff(a, b []string) (add, drop []string) {
	for _, n := range b {
		if _, ok := slices.BinarySearch(a, n); !ok {
			add = append(add, n)
		}
	}
	for _, n := range a {
		if _, ok := slices.BinarySearch(b, n); !ok {
			drop = append(drop, n)
		}
	}
	return add, drop
}
