package xds

import (
	"sync"

	"github.com/meshd/meshd/krt"
)

// Demand. Some resources are of use only to the one client that asks for
// them by name (WithNamedOnly), and a model that built them all would
// hold, and serialize, one per workload address and port while a handful
// of clients ask. A Demand turns the names streams ask for into a
// collection the model derives those resources from, so that it builds
// them only while someone asks: the server's index of subscribers
// reports the first stream interested in a name and the last one to
// lose interest, and the Demand, writing to the graph on a goroutine of
// its own, adds and removes the name. The stream asking is answered
// without the resource, which a client takes for not yet known (not for
// absent), and is pushed it once the model has built it, as for any
// other change.

// Demand is the set of names of one type that streams name, or hold,
// and that match its filter, as a collection of the graph: make one with
// NewDemand, derive from Names, and attach it to the type's source with
// WithDemand. A stream subscribing to the whole type (wildcard) adds no
// names, even those it names too: its subscription is indexed as a
// wildcard only. One Demand may serve several servers over one graph; a
// name stays while any of them has a stream interested in it.
type Demand struct {
	g     *krt.Graph
	match func(name string) bool
	names krt.Static[string]

	mu sync.Mutex // guards following; a leaf of the lock order
	// counts holds, per name, how many servers have a stream
	// interested in it.
	counts map[string]int
	// pending holds the names whose presence changed since the writer
	// last wrote, with their presence now.
	pending map[string]bool
	// writing is set while a writer goroutine runs.
	writing bool
	// idle is closed, and replaced, whenever the writer has written
	// everything pending (wait).
	idle chan struct{}
}

// NewDemand returns an empty Demand in g for the names match accepts;
// match must be cheap and deterministic.
func NewDemand(g *krt.Graph, name string, match func(name string) bool) *Demand {
	return &Demand{
		g:       g,
		match:   match,
		names:   krt.NewStatic[string](g, krt.WithName(name), krt.WithKey(func(n string) string { return n })),
		counts:  map[string]int{},
		pending: map[string]bool{},
		idle:    make(chan struct{}),
	}
}

// Names returns the collection of names asked for, each item keyed by
// itself.
func (d *Demand) Names() krt.Collection[string] { return d.names }

// WithDemand makes the streams' interest in the source's type feed d.
// Two sources of one type (variants) may not carry different Demands.
func WithDemand[T any](d *Demand) SourceOption[T] {
	return func(s *source[T]) { s.demand = d }
}

// note records that a server's interest in name started (on) or ended.
// It returns at once: the writer applies the change to the graph.
func (d *Demand) note(name string, on bool) {
	if !d.match(name) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	was := d.counts[name] > 0
	if on {
		d.counts[name]++
	} else if d.counts[name]--; d.counts[name] <= 0 {
		delete(d.counts, name)
	}
	if now := d.counts[name] > 0; now != was {
		d.pending[name] = now
	}
	if len(d.pending) > 0 && !d.writing {
		d.writing = true
		go d.write()
	}
}

// write applies the pending changes to the graph until none is left.
// It runs outside every lock of the servers: note is called under the
// index's and the cache's locks, and a write recomputes what the cache
// then takes in.
func (d *Demand) write() {
	for {
		d.mu.Lock()
		batch := d.pending
		if len(batch) == 0 {
			d.writing = false
			close(d.idle)
			d.idle = make(chan struct{})
			d.mu.Unlock()
			return
		}
		d.pending = map[string]bool{}
		d.mu.Unlock()
		d.g.Update(func(tx *krt.Txn) {
			w := d.names.In(tx)
			for name, on := range batch {
				if on {
					w.Set(name)
				} else {
					w.Delete(name)
				}
			}
		})
	}
}
