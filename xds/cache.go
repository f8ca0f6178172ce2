package xds

import (
	"sync"

	"github.com/meshd/meshd/krt"
)

// cache holds the current serialized resources of every type. It is
// written only by the join handler, one whole batch (one graph
// transaction) at a time, so a reader holding mu sees one committed
// version of every type.
type cache struct {
	mu sync.RWMutex // guards following
	// version is the graph version of the last batch applied.
	version uint64
	types   map[string]map[string]*resource
	// ready is closed once the initial state has been applied.
	ready     chan struct{}
	readyDone bool
}

func newCache(typeURLs []string) *cache {
	c := &cache{types: make(map[string]map[string]*resource), ready: make(chan struct{})}
	for _, t := range typeURLs {
		c.types[t] = make(map[string]*resource)
	}
	return c
}

// apply applies one batch and returns the names it changed, per type.
func (c *cache) apply(b krt.Batch[entry]) map[string][]string {
	changed := make(map[string][]string)
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.Version > c.version {
		c.version = b.Version
	}
	for _, ev := range b.Events {
		r := ev.Latest().res
		m := c.types[r.typeURL]
		if m == nil {
			continue
		}
		if ev.Type == krt.EventDelete {
			delete(m, r.name)
		} else {
			m[r.name] = ev.New.res
		}
		changed[r.typeURL] = append(changed[r.typeURL], r.name)
	}
	return changed
}

// markReady closes ready once.
func (c *cache) markReady() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.readyDone {
		c.readyDone = true
		close(c.ready)
	}
}

// counts returns the number of resources per type.
func (c *cache) counts() map[string]int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]int, len(c.types))
	for t, m := range c.types {
		out[shortType(t)] = len(m)
	}
	return out
}
