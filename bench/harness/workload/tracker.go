package workload

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Tracker is fed an engine's Endpoints events (see [Observe]): it records
// which expected IPs have appeared in an event, and wakes a waiter once
// none is pending. It is safe for concurrent use; the zero value is not
// ready, use [NewTracker].
type Tracker struct {
	batches atomic.Int64
	events  atomic.Int64

	mu      sync.Mutex // guards following
	pending map[string]struct{}
	waitCh  chan struct{} // closed once pending is empty; nil when unarmed
	// seenAt is when an event last emptied pending for an armed waiter:
	// when the handler held the change, before the waiter wakes.
	seenAt time.Time
	// probeSvc, when set, is a service whose every IP list is recorded
	// in probeSeen.
	probeSvc  string
	probeSeen [][]string
}

// NewTracker returns a Tracker with nothing pending.
func NewTracker() *Tracker { return &Tracker{pending: map[string]struct{}{}} }

// Observe records one batch of Endpoints events: newValue returns an
// event's new value, nil for a deletion. It takes the engine's own event
// type, so that each engine's handler is a one-line call.
func Observe[E any](t *Tracker, events []E, newValue func(E) *Endpoints) {
	t.batches.Add(1)
	t.events.Add(int64(len(events)))
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range events {
		ep := newValue(e)
		if ep == nil {
			continue
		}
		if t.probeSvc != "" && ep.Service == t.probeSvc {
			t.probeSeen = append(t.probeSeen, ep.IPs)
		}
		if len(t.pending) == 0 {
			continue
		}
		for _, ip := range ep.IPs {
			delete(t.pending, ip)
		}
	}
	if len(t.pending) == 0 && t.waitCh != nil {
		t.seenAt = time.Now()
		close(t.waitCh)
		t.waitCh = nil
	}
}

// Expect marks ip as pending, and supersedes (if any) as no longer
// awaited: a pod changed twice need only show its last IP.
func (t *Tracker) Expect(ip, supersedes string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if supersedes != "" {
		delete(t.pending, supersedes)
	}
	t.pending[ip] = struct{}{}
}

// Arm returns a channel closed once nothing is pending (at once if
// nothing is). It panics if a channel it returned is still open: one
// waiter at a time.
func (t *Tracker) Arm() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if len(t.pending) == 0 {
		t.seenAt = time.Now() // all seen already: no later event closes ch
		close(ch)
		return ch
	}
	if t.waitCh != nil {
		panic("workload: Tracker armed twice")
	}
	t.waitCh = ch
	return ch
}

// Await waits for ch, a channel Arm returned, to close, for at most d.
// On a timeout the error says how many expected IPs are still unseen.
func (t *Tracker) Await(ch <-chan struct{}, d time.Duration) error {
	select {
	case <-ch:
		return nil
	case <-time.After(d):
		return fmt.Errorf("timeout after %v (%d expected IPs still unseen)", d, t.Pending())
	}
}

// SeenAt returns when the handler was given the event that closed the
// channel Arm last returned, or when Arm closed it at once (zero if
// neither has happened): a single change's latency to the handler ends
// there, the waiter's wake-up after it.
func (t *Tracker) SeenAt() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seenAt
}

// Pending returns how many expected IPs no event has shown yet.
func (t *Tracker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// Batches returns the batches observed since the last ResetCounts.
func (t *Tracker) Batches() int64 { return t.batches.Load() }

// Events returns the events observed since the last ResetCounts.
func (t *Tracker) Events() int64 { return t.events.Load() }

// ResetCounts sets Batches and Events to zero.
func (t *Tracker) ResetCounts() {
	t.batches.Store(0)
	t.events.Store(0)
}

// WatchProbe starts recording every IP list of the service with key svc.
func (t *Tracker) WatchProbe(svc string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.probeSvc, t.probeSeen = svc, nil
}

// EndProbe stops recording and returns the IP lists recorded since
// WatchProbe, oldest first.
func (t *Tracker) EndProbe() [][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.probeSeen
	t.probeSvc, t.probeSeen = "", nil
	return seen
}

// Counter is fed an engine's Workload events (see [Count]) and counts the
// updated workloads that carry a given trust domain, for the mesh-config
// phase. It is safe for concurrent use; the zero value is ready.
type Counter struct {
	mu     sync.Mutex // guards following
	domain string
	want   int
	seen   int
	done   chan struct{}
}

// Arm starts counting workloads with domain and returns a channel closed
// once want of them have been seen.
func (c *Counter) Arm(domain string, want int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.domain, c.want, c.seen = domain, want, 0
	c.done = make(chan struct{})
	return c.done
}

// Count records one batch of Workload events; newValue returns an
// event's new value, nil for a deletion. Unarmed, it does nothing.
func Count[E any](c *Counter, events []E, newValue func(E) *Workload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		return
	}
	for _, e := range events {
		if w := newValue(e); w != nil && w.TrustDomain == c.domain {
			c.seen++
		}
	}
	if c.seen >= c.want {
		close(c.done)
		c.done = nil
	}
}
