package app

import (
	"context"
	"sync"
)

// readiness tracks what must happen before meshd is ready: every source has
// synced and the xDS server has published its first consistent version.
// Each condition is a channel that closes once it holds, so a condition
// never goes back to not ready.
type readiness struct {
	mu     sync.Mutex // guards following
	checks []check
}

type check struct {
	name string
	done []<-chan struct{}
}

// holds reports whether every channel of c is closed.
func (c check) holds() bool {
	for _, d := range c.done {
		select {
		case <-d:
		default:
			return false
		}
	}
	return true
}

// add registers a condition that holds once every channel in done is
// closed: name says, in /readyz's body, what is still awaited.
func (r *readiness) add(name string, done ...<-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, check{name, done})
}

// pending returns the names of the conditions that do not hold yet, in the
// order they were added.
func (r *readiness) pending() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.checks {
		if !c.holds() {
			out = append(out, c.name)
		}
	}
	return out
}

// wait blocks until every condition holds, and reports whether they did
// before ctx ended.
func (r *readiness) wait(ctx context.Context) bool {
	r.mu.Lock()
	checks := append([]check(nil), r.checks...)
	r.mu.Unlock()
	for _, c := range checks {
		for _, d := range c.done {
			select {
			case <-d:
			case <-ctx.Done():
				return false
			}
		}
	}
	return true
}
