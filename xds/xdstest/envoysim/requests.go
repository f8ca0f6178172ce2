package envoysim

import (
	"maps"
	"time"
)

// follow returns the requests the configuration now calls for: the load
// assignments of the clusters (active and warming) and the route
// configurations of the listeners, when those sets changed, and the
// first listener request, which Envoy sends once its first clusters are
// warm (CDS, then EDS, then LDS, then RDS).
func (c *core) follow() []request {
	var out []request
	if r, ok := c.derive(EndpointType, c.edsWanted()); ok {
		out = append(out, r)
	}
	if lds := c.subs[ListenerType]; !lds.started && c.subs[ClusterType].nonce != "" && len(c.cfg.WarmingClusters) == 0 {
		out = append(out, c.subscribeRequest(lds, nil, nil))
	}
	if r, ok := c.derive(RouteType, c.rdsWanted()); ok {
		out = append(out, r)
	}
	return out
}

// edsWanted returns the load assignments the clusters, active and
// warming, need.
func (c *core) edsWanted() map[string]bool {
	want := map[string]bool{}
	for _, cl := range c.cfg.Clusters {
		if n, ok := edsName(cl); ok {
			want[n] = true
		}
	}
	for _, w := range c.cfg.WarmingClusters {
		if n, ok := edsName(w.Resource); ok {
			want[n] = true
		}
	}
	return want
}

// rdsWanted returns the route configurations the listeners, active and
// warming, name.
func (c *core) rdsWanted() map[string]bool {
	want := map[string]bool{}
	for _, l := range c.cfg.Listeners {
		for _, n := range listenerRoutes(l) {
			want[n] = true
		}
	}
	for _, w := range c.cfg.WarmingListeners {
		for _, n := range listenerRoutes(w.Resource) {
			want[n] = true
		}
	}
	return want
}

// derive makes want the names of typeURL the proxy asks for, and returns
// the request that says so, if that changed them. The proxy forgets the
// resources it stops asking for.
func (c *core) derive(typeURL string, want map[string]bool) (request, bool) {
	s := c.subs[typeURL]
	if !s.started && len(want) == 0 {
		return request{}, false
	}
	added, removed := s.set(want)
	if s.started && len(added) == 0 && len(removed) == 0 {
		return request{}, false
	}
	for _, n := range removed {
		delete(s.versions, n)
		delete(c.cfg.Endpoints, n)
		if typeURL == RouteType {
			delete(c.cfg.Routes, n)
		}
	}
	return c.subscribeRequest(s, added, removed), true
}

// subscribeRequest returns the request that tells the server of a
// subscription change: the names added and removed, or the first request
// of the type.
func (c *core) subscribeRequest(s *subscription, added, removed []string) request {
	first := !s.started
	s.started = true
	c.unsub.request(s.typeURL, added, removed)
	r := request{typeURL: s.typeURL, version: s.accepted, nonce: s.nonce, names: s.list(),
		subscribe: added, unsubscribe: removed}
	if first && s.wildcard && len(s.names) > 0 {
		r.subscribe = append([]string{"*"}, r.subscribe...)
	}
	return r
}

// restart returns the requests a proxy sends on a new stream: every type
// it asked for, in the order it first did, naming what it holds (SotW:
// the version accepted; Delta: each resource's version).
func (c *core) restart() []request {
	c.unsub.reset()
	c.unsub.first = map[key]int{}
	c.overlap = map[key]time.Time{}
	var out []request
	for _, t := range startOrder {
		s := c.subs[t]
		if !s.started {
			continue
		}
		s.nonce = ""
		names := sortedKeys(s.names)
		c.unsub.request(t, names, nil)
		r := request{typeURL: t, version: s.accepted, names: s.list(), subscribe: names}
		if s.wildcard && len(names) > 0 {
			r.subscribe = append([]string{"*"}, names...)
		}
		if c.delta && len(s.versions) > 0 {
			r.initial = maps.Clone(s.versions)
		}
		out = append(out, r)
	}
	return out
}
