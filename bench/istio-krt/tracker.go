package main

import (
	"sync"
	"sync/atomic"

	"istio.io/istio/pkg/kube/krt"
)

// tracker is an Endpoints handler that records which expected IPs have
// appeared in an event, and wakes a waiter once none is pending.
type tracker struct {
	batches atomic.Int64
	events  atomic.Int64

	mu      sync.Mutex // guards following
	pending map[string]struct{}
	waitCh  chan struct{} // closed once pending is empty; nil when unarmed
	// probeSvc, when set, is a service whose every IP list is recorded
	// in probeSeen.
	probeSvc  string
	probeSeen [][]string
}

func newTracker() *tracker { return &tracker{pending: map[string]struct{}{}} }

func (t *tracker) handle(events []krt.Event[Endpoints]) {
	t.batches.Add(1)
	t.events.Add(int64(len(events)))
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range events {
		if e.New == nil {
			continue
		}
		if t.probeSvc != "" && e.New.Service == t.probeSvc {
			t.probeSeen = append(t.probeSeen, e.New.IPs)
		}
		for _, ip := range e.New.IPs {
			if len(t.pending) == 0 {
				break
			}
			delete(t.pending, ip)
		}
	}
	if len(t.pending) == 0 && t.waitCh != nil {
		close(t.waitCh)
		t.waitCh = nil
	}
}

// expect marks ip as pending, and supersedes (if any) as no longer awaited:
// a pod changed twice need only show its last IP.
func (t *tracker) expect(ip, supersedes string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if supersedes != "" {
		delete(t.pending, supersedes)
	}
	t.pending[ip] = struct{}{}
}

// arm returns a channel closed once nothing is pending.
func (t *tracker) arm() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if len(t.pending) == 0 {
		close(ch)
		return ch
	}
	if t.waitCh != nil {
		fatalf("tracker armed twice")
	}
	t.waitCh = ch
	return ch
}

func (t *tracker) pendingCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

func (t *tracker) resetCounts() {
	t.batches.Store(0)
	t.events.Store(0)
}

// watchProbe starts recording every IP list of svc.
func (t *tracker) watchProbe(svc string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.probeSvc, t.probeSeen = svc, nil
}

// endProbe stops recording and returns what was recorded.
func (t *tracker) endProbe() [][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := t.probeSeen
	t.probeSvc, t.probeSeen = "", nil
	return seen
}

// workloadCounter is a Workloads handler counting updated workloads that
// carry a given trust domain, for the mesh-config phase.
type workloadCounter struct {
	mu     sync.Mutex // guards following
	domain string
	want   int
	seen   int
	done   chan struct{}
}

func (c *workloadCounter) arm(domain string, want int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.domain, c.want, c.seen = domain, want, 0
	c.done = make(chan struct{})
	return c.done
}

func (c *workloadCounter) handle(events []krt.Event[Workload]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		return
	}
	for _, e := range events {
		if e.New != nil && e.New.TrustDomain == c.domain {
			c.seen++
		}
	}
	if c.seen >= c.want {
		close(c.done)
		c.done = nil
	}
}
