package envoysim

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/proto"
)

// apply brings the configuration up to date with an accepted update of
// typeURL.
func (c *core) apply(typeURL string, u *update, now time.Time) {
	switch typeURL {
	case ClusterType:
		applyRoots(c.cfg.Clusters, c.cfg.WarmingClusters, u, c.clusterWaits, now, c.responses)
	case ListenerType:
		applyRoots(c.cfg.Listeners, c.cfg.WarmingListeners, u, c.listenerWaits, now, c.responses)
	case EndpointType:
		applyLeaves(&c.stats, typeURL, c.cfg.Endpoints, u, c.cfg.Clusters, c.cfg.WarmingClusters, c.responses)
	case RouteType:
		applyLeaves(&c.stats, typeURL, c.cfg.Routes, u, c.cfg.Listeners, c.cfg.WarmingListeners, c.responses)
	}
	s := c.subs[typeURL]
	for _, n := range u.order {
		s.versions[n] = u.versions[n]
	}
	for _, n := range u.removed {
		delete(s.versions, n)
	}
}

// clusterWaits returns what an updated cluster waits for: an EDS
// cluster its load assignment, sent again; others nothing.
func (c *core) clusterWaits(cl *clusterv3.Cluster) ([]string, bool) {
	if n, ok := edsName(cl); ok {
		return []string{n}, true
	}
	return nil, false
}

// listenerWaits returns what an updated listener waits for: the route
// configurations it names that the proxy does not hold, or, with
// WarmListenersOnRoutes, all of them, sent again.
func (c *core) listenerWaits(l *listenerv3.Listener) ([]string, bool) {
	routes := listenerRoutes(l)
	if c.opts.strictRoutes {
		return routes, len(routes) > 0
	}
	var unknown []string
	for _, r := range routes {
		if c.cfg.Routes[r] == nil {
			unknown = append(unknown, r)
		}
	}
	return unknown, len(unknown) > 0
}

// applyRoots applies an update of clusters or listeners: a resource new
// or changed (compared with its warming form, if warming) that waits for
// nothing takes effect at once; one that waits starts warming, and the
// active one, if any, serves meanwhile. Resources a full update leaves
// out, and those a Delta update removes, go. Envoy does not take from LDS
// a listener with an api_listener, so it is skipped.
func applyRoots[T proto.Message](active map[string]T, warming map[string]*Warming[T], u *update,
	waits func(T) ([]string, bool), now time.Time, resp int) {
	for _, n := range u.order {
		msg := u.resources[n].(T)
		if l, ok := any(msg).(*listenerv3.Listener); ok && l.GetApiListener() != nil {
			delete(u.resources, n)
			continue
		}
		cur, has := active[n]
		if w := warming[n]; w != nil {
			cur, has = w.Resource, true
		}
		if has && proto.Equal(cur, msg) {
			continue
		}
		names, warms := waits(msg)
		if !warms {
			active[n] = msg
			delete(warming, n)
			continue
		}
		warming[n] = newWarming(msg, names, now, resp)
	}
	gone := u.removed
	if u.full {
		gone = nil
		for n := range active {
			if u.resources[n] == nil {
				gone = append(gone, n)
			}
		}
		for n := range warming {
			if u.resources[n] == nil {
				gone = append(gone, n)
			}
		}
	}
	for _, n := range gone {
		delete(active, n)
		delete(warming, n)
	}
}

// applyLeaves applies an update of load assignments or route
// configurations, received as response number resp: each one held, and
// the clusters or listeners warming on it that it leaves waiting for
// nothing take effect.
func applyLeaves[L, R proto.Message](stats *Stats, typeURL string, held map[string]L, u *update,
	active map[string]R, warming map[string]*Warming[R], resp int) {
	unchanged(stats, typeURL, u, held)
	for _, n := range u.order {
		held[n] = u.resources[n].(L)
		for _, r := range arrived(warming, n, resp) {
			active[r] = warming[r].Resource
			delete(warming, r)
		}
	}
	for _, n := range u.removed {
		delete(held, n)
	}
}
