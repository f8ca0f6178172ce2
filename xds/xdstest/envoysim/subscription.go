package envoysim

import "sort"

// subscription is the proxy's side of one type on the stream: what it
// asks for, and what it accepted.
type subscription struct {
	typeURL string
	// started is set once the first request of the type was sent.
	started  bool
	wildcard bool
	names    map[string]bool
	// accepted is the version_info of the last response accepted (what
	// a SotW request names); nonce is the last response's nonce.
	accepted, nonce string
	// versions holds the Delta version of each resource held: what a
	// reconnecting proxy names in initial_resource_versions.
	versions map[string]string
}

func newSubscription(typeURL string) *subscription {
	return &subscription{typeURL: typeURL, names: map[string]bool{}, versions: map[string]string{}}
}

// wants reports whether the proxy asked for name.
func (s *subscription) wants(name string) bool { return s.wildcard || s.names[name] }

// list is the SotW resource_names of the subscription: the names, with
// "*" first for a wildcard that also names some, and empty for a wildcard
// alone (as Envoy asks for all Listeners and Clusters).
func (s *subscription) list() []string {
	out := sortedKeys(s.names)
	if s.wildcard && len(out) > 0 {
		out = append([]string{"*"}, out...)
	}
	return out
}

// set makes want the subscription's names and returns the names added
// and removed, sorted.
func (s *subscription) set(want map[string]bool) (added, removed []string) {
	for n := range want {
		if !s.names[n] {
			added = append(added, n)
		}
	}
	for n := range s.names {
		if !want[n] {
			removed = append(removed, n)
		}
	}
	s.names = want
	sort.Strings(added)
	sort.Strings(removed)
	return added, removed
}

// unsubscribed tracks, across the types of a stream, the names the proxy
// dropped that the server may not have read of yet. The server reads a
// stream's requests in order, so a response carrying a name first asked
// for in request k shows that it read every request up to k: a name
// dropped by one of those must not come again. Until then a response for
// it may be in flight, and the proxy ignores it, as Envoy does.
type unsubscribed struct {
	// requests counts the requests that changed a subscription.
	requests int
	// first holds the request that first asked for each name.
	first map[key]int
	// dropped holds, per name dropped, the request that dropped it.
	dropped map[key]int
	// settled holds the names dropped that the server read of.
	settled map[key]bool
}

// key is a name of a type.
type key struct{ typeURL, name string }

func newUnsubscribed() *unsubscribed {
	return &unsubscribed{first: map[key]int{}, dropped: map[key]int{}, settled: map[key]bool{}}
}

// request records one request that subscribes to added and drops
// removed, of typeURL.
func (u *unsubscribed) request(typeURL string, added, removed []string) {
	u.requests++
	for _, n := range added {
		k := key{typeURL, n}
		if _, ok := u.first[k]; !ok {
			u.first[k] = u.requests
		}
		delete(u.dropped, k)
		delete(u.settled, k)
	}
	for _, n := range removed {
		u.dropped[key{typeURL, n}] = u.requests
	}
}

// seen records that a response carried name of typeURL.
func (u *unsubscribed) seen(typeURL, name string) {
	read, ok := u.first[key{typeURL, name}]
	if !ok {
		return
	}
	for k, at := range u.dropped {
		if at <= read {
			delete(u.dropped, k)
			u.settled[k] = true
		}
	}
}

// inFlight reports whether a response may still carry name of typeURL,
// dropped by a request the server has maybe not read.
func (u *unsubscribed) inFlight(typeURL, name string) bool {
	_, ok := u.dropped[key{typeURL, name}]
	return ok
}

// reset forgets what the server read: a new stream starts with none.
func (u *unsubscribed) reset() {
	u.dropped, u.settled = map[key]int{}, map[key]bool{}
}
