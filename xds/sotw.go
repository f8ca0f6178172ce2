package xds

import (
	"fmt"
	"slices"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// handleSotW applies one State-of-the-World request: an ACK or NACK of the
// last response of its type, and the subscription it carries (the whole
// set of names).
func (c *conn) handleSotW(req *discovery.DiscoveryRequest) error {
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
		c.answerLocked(ts, req.VersionInfo, req.ResponseNonce, nackOf(req.VersionInfo, req.ResponseNonce, req.GetErrorDetail()))
	}
	if ts.answered && req.ResponseNonce != "" && req.ResponseNonce != ts.nonce {
		// An answer to an older response: a newer one is on its way and
		// the client's answer to it will carry its current subscription.
		return nil
	}

	if !first && (sameList(req.ResourceNames, ts.lastNames) || unchanged(ts, req.ResourceNames)) {
		// Most requests are ACKs repeating the subscription: skip the
		// set arithmetic, which costs as much as the names are many.
		if req.ResponseNonce == "" && fullStateType(req.TypeUrl) {
			ts.respond = true
		}
		ts.lastNames = req.ResourceNames
		return nil
	}
	explicit := make([]string, 0, len(req.ResourceNames))
	wildcard := false
	for _, n := range req.ResourceNames {
		if n == "*" {
			wildcard = true
		} else {
			explicit = append(explicit, n)
		}
	}
	if len(req.ResourceNames) == 0 && fullStateType(req.TypeUrl) && (first || ts.wildcard) {
		// The legacy wildcard: an empty first request for Listeners or
		// Clusters asks for all of them.
		wildcard = true
	}
	want := make(map[string]struct{}, len(explicit))
	var add, remove []string
	for _, n := range explicit {
		want[n] = struct{}{}
		if _, ok := ts.names[n]; !ok {
			add = append(add, n)
		}
	}
	for n := range ts.names {
		if _, ok := want[n]; !ok {
			remove = append(remove, n)
		}
	}
	after := len(want)
	if wildcard {
		after++
	}
	if err := c.checkNamesLocked(ts, after, func() int { return after }); err != nil {
		return err
	}
	changed := len(add) > 0 || len(remove) > 0 || wildcard != ts.wildcard
	c.subscribeLocked(ts, add, remove, wildcard)
	ts.lastNames = req.ResourceNames
	if fullStateType(req.TypeUrl) && (first || changed || req.ResponseNonce == "") {
		ts.respond = true
	}
	if first && req.VersionInfo != "" {
		c.resumeLocked(ts, req.VersionInfo)
	}
	return nil
}

// resumeLocked takes the version_info of a stream's first request of a
// type: the version the client accepted last, on an earlier stream, which
// grpc-go and Envoy name when they reconnect — maybe to another replica,
// since versions are digests of content. If it is the digest of the
// resources the new subscription would be sent, the client holds them
// already: they are recorded as sent and acknowledged, and no response is
// owed. Otherwise the request is answered as any first one. c.mu must be
// held.
func (c *conn) resumeLocked(ts *typeState, version string) {
	want, ok := parseDigest(version)
	if !ok {
		return
	}
	cache := c.srv.cache
	cache.mu.RLock()
	defer cache.mu.RUnlock()
	cur := cache.types[ts.typeURL]
	isolated := c.srv.opts.namespaceOf != nil
	// each calls f with every resource the subscription would be sent:
	// those it names, or all, that exist and the proxy may see.
	each := func(f func(*resource)) {
		visit := func(r *resource) {
			if r != nil && (!isolated || !c.hiddenLocked(r)) {
				f(r)
			}
		}
		if ts.wildcard {
			for _, r := range cur {
				visit(r)
			}
			return
		}
		for n := range ts.names {
			visit(cur[n])
		}
	}
	var d digest
	each(func(r *resource) { d.add(r.pair) })
	if d != want {
		return
	}
	each(ts.hold)
	// The names the subscription marked pending are all held current.
	delete(c.pending, ts.typeURL)
	ts.respond = false
	c.resumedLocked(ts, time.Now())
}

// sameList reports whether a non-empty names list is the list of the
// subscription's last request, which that request applied. Served names
// share the cache's strings (requestCodec), so an ACK repeating thousands
// of names compares as pointers, without hashing one.
func sameList(names, last []string) bool {
	return len(names) > 0 && slices.Equal(names, last)
}

// unchanged reports whether names is the subscription ts already has.
func unchanged(ts *typeState, names []string) bool {
	if len(names) == 0 {
		// An empty list keeps a Listener or Cluster subscription as it is
		// (the legacy wildcard) and means "nothing" for other types.
		return len(ts.names) == 0 && (fullStateType(ts.typeURL) || !ts.wildcard)
	}
	if ts.wildcard || len(names) != len(ts.names) {
		// A list without "*" ends a wildcard subscription.
		return false
	}
	for _, n := range names {
		if _, ok := ts.names[n]; !ok {
			return false
		}
	}
	return true
}

func nackOf(version, nonce string, detail interface {
	GetCode() int32
	GetMessage() string
}) *Nack {
	if detail == nil || (detail.GetCode() == 0 && detail.GetMessage() == "") {
		return nil
	}
	return &Nack{Version: version, Nonce: nonce, Code: detail.GetCode(), Message: detail.GetMessage(), Time: time.Now()}
}

// sendSotW sends u as a DiscoveryResponse.
func sendSotW(stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesServer, u update) (int, error) {
	resp := &discovery.DiscoveryResponse{
		VersionInfo: u.version,
		TypeUrl:     u.typeURL,
		Nonce:       u.nonce,
		Resources:   make([]*anypb.Any, len(u.resources)),
	}
	bytes := 0
	for i, r := range u.resources {
		resp.Resources[i] = r.any
		bytes += r.size()
	}
	if err := stream.Send(resp); err != nil {
		return 0, fmt.Errorf("xds: send %s: %w", shortType(u.typeURL), err)
	}
	return bytes, nil
}
