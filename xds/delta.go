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
		c.holdInitialLocked(ts, req.InitialResourceVersions)
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

// holdInitialLocked records the versions a reconnecting Delta client
// names (initial_resource_versions) as held, and marks the names pending
// so that the type's first flush settles each. A name whose current
// resource, visible to the proxy, has the version named is held as that
// resource: its (name, version) hash is computed already, and the config
// dump has its bytes. Hashing thousands of pairs (clientResource) is
// most of what resuming a wildcard stream costs otherwise. c.mu must be
// held; the cache's read lock is taken after it, as flush does.
func (c *conn) holdInitialLocked(ts *typeState, versions map[string]string) {
	known := make([]string, 0, len(versions))
	if len(ts.sent) == 0 {
		// Sized once, not grown name by name.
		ts.sent = make(map[string]*resource, len(versions))
	}
	cache := c.srv.cache
	cache.mu.RLock()
	cur := cache.types[ts.typeURL]
	isolated := c.srv.opts.namespaceOf != nil
	for name, v := range versions {
		if r := cur[name]; r != nil && r.version == v && (!isolated || !c.hiddenLocked(r)) {
			ts.hold(r)
			known = append(known, r.name)
			continue
		}
		ts.hold(clientResource(ts.typeURL, name, v))
		known = append(known, name)
	}
	cache.mu.RUnlock()
	c.addPendingLocked(ts.typeURL, known)
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
