package envoysim

import (
	"time"

	"google.golang.org/protobuf/proto"
)

// Stats counts what the proxy received, per type URL.
type Stats struct {
	Responses map[string]int
	Resources map[string]int
	// Unchanged counts the load assignments and route configurations
	// received equal to the ones held: the resends a cluster or listener
	// update warms on, and any the server sends needlessly.
	Unchanged map[string]int
	Nacks     map[string]int
}

func newStats() Stats {
	return Stats{Responses: map[string]int{}, Resources: map[string]int{}, Unchanged: map[string]int{}, Nacks: map[string]int{}}
}

func (s *Stats) received(r *response) {
	s.Responses[r.typeURL]++
	s.Resources[r.typeURL] += len(r.resources)
}

// unchanged counts the resources of u equal to those held.
func unchanged[T proto.Message](s *Stats, typeURL string, u *update, held map[string]T) {
	for _, n := range u.order {
		if h, ok := held[n]; ok && proto.Equal(h, u.resources[n]) {
			s.Unchanged[typeURL]++
		}
	}
}

func (s Stats) clone() Stats {
	out := newStats()
	for t, n := range s.Responses {
		out.Responses[t] = n
	}
	for t, n := range s.Resources {
		out.Resources[t] = n
	}
	for t, n := range s.Unchanged {
		out.Unchanged[t] = n
	}
	for t, n := range s.Nacks {
		out.Nacks[t] = n
	}
	return out
}

// check reports, at now, what waited longer than the warming limit: an
// updated cluster or listener still warming, and on Delta a name dropped
// beside a wildcard that the server did not settle.
func (c *core) check(now time.Time) {
	limit := c.opts.warmingLimit
	for _, n := range overdue(c.cfg.WarmingClusters, now, limit) {
		w := c.cfg.WarmingClusters[n]
		c.violate(RuleWarmingOverdue, ClusterType, n, "warming for %v, waiting for load assignment %v", now.Sub(w.Since), sortedKeys(w.Waits))
	}
	for _, n := range overdue(c.cfg.WarmingListeners, now, limit) {
		w := c.cfg.WarmingListeners[n]
		c.violate(RuleWarmingOverdue, ListenerType, n, "warming for %v, waiting for route configurations %v", now.Sub(w.Since), sortedKeys(w.Waits))
	}
	for k, since := range c.overlap {
		if now.Sub(since) > limit {
			delete(c.overlap, k)
			c.violate(RuleWildcardOverlap, k.typeURL, k.name, "dropped beside the wildcard %v ago; the server neither sent it nor named it removed", now.Sub(since))
		}
	}
}

// deadline returns when check next has something to report, and false
// when nothing is waiting.
func (c *core) deadline() (time.Time, bool) {
	limit := c.opts.warmingLimit
	next, ok := nextDeadline(c.cfg.WarmingClusters, limit)
	if l, lok := nextDeadline(c.cfg.WarmingListeners, limit); lok && (!ok || l.Before(next)) {
		next, ok = l, true
	}
	for _, since := range c.overlap {
		if d := since.Add(limit); !ok || d.Before(next) {
			next, ok = d, true
		}
	}
	return next, ok
}
