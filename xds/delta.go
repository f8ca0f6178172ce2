package xds

import (
	"maps"
	"slices"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// delta applies one Delta request: an ACK or NACK, the client's known
// versions on its first request of a type, and the names it subscribes
// to and unsubscribes from. v is the cache the request is read against.
func (s *session) delta(req *discovery.DeltaDiscoveryRequest, v view, now time.Time) error {
	ts, first, err := s.begin(req.GetTypeUrl(), req.GetNode())
	if ts == nil {
		return err
	}
	s.answer(ts, ts.version, req.ResponseNonce, req.GetErrorDetail(), now)
	if first && len(req.InitialResourceVersions) > 0 {
		// The client reconnects holding these versions, maybe from another
		// replica (versions are hashes of content): only what differs is
		// sent, and what is gone is named removed. The first flush of the
		// type settles every name: the client's versions left held are
		// the current ones.
		s.holdInitial(ts, req.InitialResourceVersions, v)
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
	if err := s.checkNames(ts, ts.names.len()+len(add)+1, func() int { return ts.countAfter(add, remove, wildcard) }); err != nil {
		return err
	}
	overlap := heldBesideWildcard(ts, remove, wildcard)
	s.subscribe(ts, v, add, remove, wildcard)
	// A client dropping a name it may also hold through its wildcard
	// cannot tell whether to keep it: the server sends the resource, or
	// names it removed if the wildcard does not hold it.
	s.addResend(ts.typeURL, overlap)
	s.addPending(ts.typeURL, overlap)
	return nil
}

// heldBesideWildcard returns the names of remove that ts subscribes to
// explicitly beside a wildcard that stays.
func heldBesideWildcard(ts *typeState, remove []string, wildcard bool) []string {
	if !wildcard || !ts.wildcard {
		return nil
	}
	var out []string
	for _, n := range remove {
		if ts.names.has(n) {
			out = append(out, n)
		}
	}
	return out
}

// holdInitial records the versions a reconnecting Delta client names
// (initial_resource_versions) as held, and marks the names pending so
// that the type's first flush settles each. A name whose current
// resource, visible to the proxy, has the version named is held as that
// resource: its (name, version) hash is computed already, and the config
// dump has its bytes. Hashing thousands of pairs (clientResource) is
// most of what resuming a wildcard stream costs otherwise.
func (s *session) holdInitial(ts *typeState, versions map[string]string, v view) {
	known := make([]string, 0, len(versions))
	// Sized once, not grown name by name, and in name order, so each
	// name is appended.
	ts.sent.grow(len(versions))
	cur := s.resources(v, ts.typeURL)
	isolated := s.proto.namespaceOf != nil
	for _, name := range slices.Sorted(maps.Keys(versions)) {
		ver := versions[name]
		if r := cur[name]; r != nil && r.version == ver && (!isolated || !s.hidden(r)) {
			ts.hold(r)
			known = append(known, r.name)
			continue
		}
		ts.hold(clientResource(ts.typeURL, name, ver))
		known = append(known, name)
	}
	s.addPending(ts.typeURL, known)
}
