package main

import (
	"bytes"
	"context"
	"slices"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshd/meshd/xds"
)

// openDelta opens a Delta ADS stream to addr and runs it in goroutines of
// its own until drop: wildcard Listeners and Clusters, and subscriptions
// to the routes and load assignments they name, added and dropped as they
// change. ACKs carry only the nonce. On a later stream (again) the client
// subscribes at once to every type it holds, naming with resume the
// version of each resource it holds (initial_resource_versions).
func (c *client) openDelta(ctx context.Context, addr string, again, resume bool) error {
	stream, err := openStream(c, ctx, addr, discovery.AggregatedDiscoveryServiceClient.DeltaAggregatedResources)
	if err != nil {
		return err
	}
	out := make(chan *discovery.DeltaDiscoveryRequest, 1024)
	c.dout = out
	go sendAll(stream.Send, out)
	if again {
		for _, req := range c.deltaRequests(resume) {
			out <- req
		}
	} else {
		out <- &discovery.DeltaDiscoveryRequest{Node: c.node, TypeUrl: xds.ListenerType, ResourceNamesSubscribe: c.listeners}
		if c.listeners == nil {
			out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType}
		}
	}
	handle := func(resp *discovery.DeltaDiscoveryResponse) error { return c.handleDelta(resp, out) }
	go receive(c, stream.Recv, handle)
	return nil
}

func (c *client) handleDelta(resp *discovery.DeltaDiscoveryResponse, out chan<- *discovery.DeltaDiscoveryRequest) error {
	raw := c.raw[resp.TypeUrl]
	if raw == nil {
		raw = map[string][]byte{}
		c.raw[resp.TypeUrl] = raw
	}
	versions := c.versions[resp.TypeUrl]
	if versions == nil {
		versions = map[string]string{}
		c.versions[resp.TypeUrl] = versions
	}
	for _, r := range resp.Resources {
		versions[r.Name] = r.Version
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
		delete(versions, name)
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
			c.forget(xds.RouteType, drop)
			out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.RouteType, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}
		}
	case xds.RouteType:
		if c.listeners != nil {
			cds := c.routeClusters()
			if add, drop := setDiff(c.cdsNames, cds); len(add)+len(drop) > 0 {
				c.cdsNames = cds
				c.forget(xds.ClusterType, drop)
				out <- &discovery.DeltaDiscoveryRequest{TypeUrl: xds.ClusterType, ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: drop}
			}
		}
	case xds.ClusterType:
		clusters := sortedValues(c.edsOf)
		if add, drop := setDiff(c.clusters, clusters); len(add)+len(drop) > 0 {
			c.clusters = clusters
			c.forget(xds.EndpointType, drop)
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

// forget drops the versions of the names the client unsubscribes from:
// it does not hold them any more, and does not name them on reconnecting.
func (c *client) forget(typeURL string, names []string) {
	for _, n := range names {
		delete(c.versions[typeURL], n)
	}
}
