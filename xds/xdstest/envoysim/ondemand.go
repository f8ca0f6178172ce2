package envoysim

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// subscribe adds names ("*": the wildcard) to what the proxy asks for of
// a Listener or Cluster type, as Envoy's on-demand discovery asks for a
// name beside its wildcard.
func (c *core) subscribe(typeURL string, names []string) []request {
	s := c.subs[typeURL]
	want := maps.Clone(s.names)
	var wildcard []string
	for _, n := range names {
		if n == "*" {
			s.wildcard = true
			wildcard = []string{"*"}
			continue
		}
		want[n] = true
	}
	added, _ := s.set(want)
	r := c.subscribeRequest(s, added, nil)
	r.subscribe = append(wildcard, added...)
	return []request{r}
}

// unsubscribe drops names ("*": the wildcard) of a Listener or Cluster
// type. Without the wildcard the proxy forgets, on its own, what it held
// only through it. On Delta, a name dropped that the wildcard may still
// hold stays until the server sends it or names it removed
// (RuleWildcardOverlap); on SotW the next response, which holds every
// resource the proxy asks for, says.
func (c *core) unsubscribe(typeURL string, names []string, now time.Time) []request {
	s := c.subs[typeURL]
	want := maps.Clone(s.names)
	var wildcard []string
	for _, n := range names {
		if n == "*" && s.wildcard {
			s.wildcard = false
			wildcard = []string{"*"}
		}
		delete(want, n)
	}
	_, removed := s.set(want)
	if c.delta && s.wildcard {
		for _, n := range removed {
			c.overlap[key{typeURL, n}] = now
		}
	}
	var forgotten []string
	switch {
	case s.wildcard:
	case typeURL == ClusterType:
		forgotten = forgetUnnamed(s, c.cfg.Clusters, c.cfg.WarmingClusters)
	case typeURL == ListenerType:
		forgotten = forgetUnnamed(s, c.cfg.Listeners, c.cfg.WarmingListeners)
	}
	// What the proxy held through the wildcard may still come, until the
	// server has read that it is gone.
	r := c.subscribeRequest(s, nil, append(removed, forgotten...))
	r.unsubscribe = append(wildcard, removed...)
	return append([]request{r}, c.follow()...)
}

// forgetUnnamed drops the clusters or listeners, active and warming, that
// s no longer names, and returns their names, sorted.
func forgetUnnamed[T any](s *subscription, active map[string]T, warming map[string]*Warming[T]) []string {
	var out []string
	for n := range active {
		if !s.names[n] {
			out = append(out, n)
		}
	}
	for n := range warming {
		if !s.names[n] && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range out {
		delete(active, n)
		delete(warming, n)
		delete(s.versions, n)
	}
	sort.Strings(out)
	return out
}
