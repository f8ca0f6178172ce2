package xds

import (
	"slices"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// sotw applies one State-of-the-World request: an ACK or NACK of the
// last response of its type, and the subscription it carries (the whole
// set of names). v is the cache the request is read against.
func (s *session) sotw(req *discovery.DiscoveryRequest, v view, now time.Time) error {
	ts, first, err := s.begin(req.GetTypeUrl(), req.GetNode())
	if ts == nil {
		return err
	}
	s.answer(ts, req.VersionInfo, req.ResponseNonce, req.GetErrorDetail(), now)
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
	changed, err := s.sotwSubscribe(ts, req.ResourceNames, first, v)
	if err != nil {
		return err
	}
	ts.lastNames = req.ResourceNames
	if fullStateType(req.TypeUrl) && (first || changed || req.ResponseNonce == "") {
		ts.respond = true
	}
	if first && req.VersionInfo != "" {
		s.resume(ts, req.VersionInfo, v, now)
	}
	return nil
}

// sotwSubscribe makes the names list of a SotW request ts's subscription
// and reports whether that changed it. It refuses a list that would
// exceed WithMaxSubscribedNames, changing nothing.
func (s *session) sotwSubscribe(ts *typeState, names []string, first bool, v view) (bool, error) {
	wildcard := false
	want := make(map[string]struct{}, len(names))
	var add, remove []string
	for _, n := range names {
		if n == "*" {
			wildcard = true
			continue
		}
		want[n] = struct{}{}
		if !ts.names.has(n) {
			add = append(add, n)
		}
	}
	if ts.names.len() == 0 && len(add) == len(names) {
		// The request's own list (shared, read only), which the
		// subscription may keep rather than a copy of it.
		add = names
	}
	if len(names) == 0 && fullStateType(ts.typeURL) && (first || ts.wildcard) {
		// The legacy wildcard: an empty first request for Listeners or
		// Clusters asks for all of them.
		wildcard = true
	}
	for _, n := range ts.names.all() {
		if _, ok := want[n]; !ok {
			remove = append(remove, n)
		}
	}
	after := len(want)
	if wildcard {
		after++
	}
	if err := s.checkNames(ts, after, func() int { return after }); err != nil {
		return false, err
	}
	changed := len(add) > 0 || len(remove) > 0 || wildcard != ts.wildcard
	s.subscribe(ts, v, add, remove, wildcard)
	return changed, nil
}

// resume takes the version_info of a stream's first request of a type:
// the version the client accepted last, on an earlier stream, which
// grpc-go and Envoy name when they reconnect — maybe to another replica,
// since versions are digests of content. If it is the digest of the
// resources the new subscription would be sent, the client holds them
// already: they are recorded as sent and acknowledged, and no response is
// owed. Otherwise the request is answered as any first one.
func (s *session) resume(ts *typeState, version string, v view, now time.Time) {
	want, ok := parseDigest(version)
	if !ok {
		return
	}
	cur := s.resources(v, ts.typeURL)
	isolated := s.proto.namespaceOf != nil
	// each calls f with every resource the subscription would be sent:
	// those it names, or all but those served by name only, that exist
	// and the proxy may see.
	each := func(f func(*resource)) {
		visit := func(r *resource) {
			if r != nil && (!isolated || !s.hidden(r)) {
				f(r)
			}
		}
		if ts.wildcard {
			for _, r := range cur {
				if ts.wants(r.name, r) {
					visit(r)
				}
			}
			return
		}
		for _, n := range ts.names.all() {
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
	delete(s.pending, ts.typeURL)
	ts.respond = false
	s.resumed(ts, now)
}

// sameList reports whether a non-empty names list is the list of the
// subscription's last request, which that request applied. Served names
// share the cache's strings (requestCodec), so an ACK repeating thousands
// of names compares as pointers, without hashing one; a list the codec
// recognised (listCache) is the very slice of the last request, and
// compares at once.
func sameList(names, last []string) bool {
	if len(names) == 0 || len(names) != len(last) {
		return false
	}
	return &names[0] == &last[0] || slices.Equal(names, last)
}

// unchanged reports whether names is the subscription ts already has.
func unchanged(ts *typeState, names []string) bool {
	if len(names) == 0 {
		// An empty list keeps a Listener or Cluster subscription as it is
		// (the legacy wildcard) and means "nothing" for other types.
		return ts.names.len() == 0 && (fullStateType(ts.typeURL) || !ts.wildcard)
	}
	if ts.wildcard || len(names) != ts.names.len() {
		// A list without "*" ends a wildcard subscription.
		return false
	}
	for _, n := range names {
		if !ts.names.has(n) {
			return false
		}
	}
	return true
}
