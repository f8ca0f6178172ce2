package envoysim

import (
	"sort"
	"time"
)

// Warming is an added or updated cluster or listener that does not serve
// yet: Envoy warms an EDS cluster until a ClusterLoadAssignment for it
// arrives after the update, even an unchanged one, and a listener until
// the route configurations it names are known (or, with
// WarmListenersOnRoutes, arrive again after the update).
type Warming[T any] struct {
	Resource T
	// Waits holds the names still awaited: a cluster's load assignment,
	// a listener's route configurations.
	Waits map[string]bool
	// Since is when the update arrived.
	Since time.Time
	// after is the number of the response that brought the update: only
	// later responses satisfy it.
	after int
	// overdue is set once the warming was reported as overdue.
	overdue bool
}

// newWarming returns r warming for waits since response after.
func newWarming[T any](r T, waits []string, now time.Time, after int) *Warming[T] {
	w := &Warming[T]{Resource: r, Waits: map[string]bool{}, Since: now, after: after}
	for _, n := range waits {
		w.Waits[n] = true
	}
	return w
}

// arrived takes name, delivered by response number resp, off what the
// warming resources wait for, and returns those now warm, by name.
func arrived[T any](warming map[string]*Warming[T], name string, resp int) []string {
	var done []string
	for key, w := range warming {
		if !w.Waits[name] || resp <= w.after {
			continue
		}
		delete(w.Waits, name)
		if len(w.Waits) == 0 {
			done = append(done, key)
		}
	}
	sort.Strings(done)
	return done
}

// overdue returns, once each, the warming resources waiting longer than
// limit at now, by name.
func overdue[T any](warming map[string]*Warming[T], now time.Time, limit time.Duration) []string {
	var out []string
	for key, w := range warming {
		if !w.overdue && now.Sub(w.Since) > limit {
			w.overdue = true
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

// nextDeadline returns the earliest time a warming resource becomes
// overdue, and false when none can.
func nextDeadline[T any](warming map[string]*Warming[T], limit time.Duration) (time.Time, bool) {
	var next time.Time
	for _, w := range warming {
		if d := w.Since.Add(limit); !w.overdue && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	return next, !next.IsZero()
}
