package xds

import (
	"fmt"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// handleDelta applies one Delta request: an ACK or NACK, the client's
// known versions on its first request of a type, and the names it
// subscribes to and unsubscribes from.
func (c *conn) handleDelta(req *discovery.DeltaDiscoveryRequest) error {
	served, err := c.servedType(req.GetTypeUrl())
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The node counts whatever the type: a client names it in its first
	// request only.
	if err := c.setNodeLocked(req.GetNode()); err != nil {
		return err
	}
	if !served {
		return nil
	}
	first := c.types[req.TypeUrl] == nil
	ts := c.typeStateLocked(req.TypeUrl)
	if req.ResponseNonce != "" {
		c.answerLocked(ts, ts.version, req.ResponseNonce, nackOf(ts.version, req.ResponseNonce, req.GetErrorDetail()))
	}
	if first && len(req.InitialResourceVersions) > 0 {
		// The client reconnects holding these versions, maybe from another
		// replica (versions are hashes of content): only what differs is
		// sent, and what is gone is named removed. The first flush of the
		// type settles every name: the client's versions left held are
		// the current ones.
		known := make([]string, 0, len(req.InitialResourceVersions))
		for name, v := range req.InitialResourceVersions {
			ts.hold(clientResource(req.TypeUrl, name, v))
			known = append(known, name)
		}
		c.addPendingLocked(req.TypeUrl, known)
		ts.resuming = true
	}

	wildcard := ts.wildcard
	if first && len(req.ResourceNamesSubscribe) == 0 && fullStateType(req.TypeUrl) {
		wildcard = true
	}
	var add, remove []string
	for _, n := range req.ResourceNamesSubscribe {
		if n == "*" {
			wildcard = true
		} else {
			add = append(add, n)
		}
	}
	for _, n := range req.ResourceNamesUnsubscribe {
		if n == "*" {
			wildcard = false
		} else {
			remove = append(remove, n)
		}
	}
	if err := c.checkNamesLocked(ts, len(ts.names)+len(add)+1, func() int { return ts.countAfter(add, remove, wildcard) }); err != nil {
		return err
	}
	c.subscribeLocked(ts, add, remove, wildcard)
	return nil
}

// sendDelta sends u as a DeltaDiscoveryResponse.
func sendDelta(stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesServer, u update) (int, error) {
	resp := &discovery.DeltaDiscoveryResponse{
		SystemVersionInfo: u.version,
		TypeUrl:           u.typeURL,
		Nonce:             u.nonce,
		Resources:         make([]*discovery.Resource, len(u.resources)),
		RemovedResources:  u.removed,
	}
	bytes := 0
	for i, r := range u.resources {
		resp.Resources[i] = r.delta
		bytes += r.size()
	}
	if err := stream.Send(resp); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	return bytes, nil
}
