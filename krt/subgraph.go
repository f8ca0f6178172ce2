package krt

import (
	"fmt"
	"slices"
)

// Owner is what a collection is created in: a *Graph, or a *SubGraph of
// one. Every constructor takes an Owner first.
type Owner interface {
	owner() (*Graph, *SubGraph)
}

func (g *Graph) owner() (*Graph, *SubGraph) { return g, nil }

// SubGraph is a part of a graph that can be stopped while the graph runs:
// the collections of one remote cluster, of one CRD installed later, of
// one tenant. Collections created in a SubGraph (pass it where a
// constructor takes an Owner) belong to the graph as any other: they
// share its transactions, versions and Run, and read and are read by
// collections outside. Stop removes them all at once.
//
// A SubGraph is safe for concurrent use; make one with Graph.NewSubGraph
// or SubGraph.NewSubGraph.
type SubGraph struct {
	g      *Graph
	parent *SubGraph
	name   string

	// guarded by g.lock
	nodes   []node
	subs    []*SubGraph
	stopped bool
}

// NewSubGraph returns an empty sub-graph of g named name (for
// introspection).
func (g *Graph) NewSubGraph(name string) *SubGraph {
	return &SubGraph{g: g, name: name}
}

// NewSubGraph returns a sub-graph of s, stopped when s is. It panics if s
// has stopped.
func (s *SubGraph) NewSubGraph(name string) *SubGraph {
	s.g.lockWrite()
	defer s.g.unlockWrite()
	if s.stopped {
		panic(fmt.Sprintf("krt: NewSubGraph in sub-graph %q, which has stopped", s.name))
	}
	child := &SubGraph{g: s.g, parent: s, name: s.name + "/" + name}
	s.subs = append(s.subs, child)
	return child
}

func (s *SubGraph) owner() (*Graph, *SubGraph) { return s.g, s }

// Name returns the sub-graph's name, prefixed by its parents'.
func (s *SubGraph) Name() string { return s.name }

// adoptLocked files n as one of s's nodes; the caller holds the write lock.
func (s *SubGraph) adoptLocked(n node) {
	if s.stopped {
		panic(fmt.Sprintf("krt: collection %q created in sub-graph %q, which has stopped", n.nodeName(), s.name))
	}
	s.nodes = append(s.nodes, n)
}

// Stop removes every collection of s and of its sub-graphs from the graph,
// in one transaction, whose version it returns. First each collection is
// emptied: collections outside s that read it see its items deleted and
// are recomputed, and their handlers get the deletes. Then each is
// detached: its handlers stop (their goroutines end), its reads of other
// collections are forgotten, its indexes and items are dropped, and it
// leaves Describe. Nothing of s is kept by the graph afterwards, so its
// memory is freed once the program drops its own references.
//
// After Stop, s's collections read as empty; a Fetch from one returns
// nothing and records no dependency, and a write to one panics, as does
// creating a collection in s. Stop is idempotent. It must not be called
// from a transformation or handler of s's own graph transaction (it
// writes), but may be called from a handler.
func (s *SubGraph) Stop() uint64 {
	g := s.g
	g.lockWrite()
	defer g.unlockWrite()
	if s.stopped {
		return g.version.Load()
	}
	nodes := s.stopLocked(nil)
	tx := g.newTxn()
	for i := len(nodes) - 1; i >= 0; i-- {
		nodes[i].stop(tx)
	}
	v := tx.commit()
	g.detachLocked(nodes)
	if p := s.parent; p != nil {
		p.subs = slices.DeleteFunc(p.subs, func(x *SubGraph) bool { return x == s })
	}
	return v
}

// stopLocked marks s and its sub-graphs stopped and appends their nodes.
func (s *SubGraph) stopLocked(nodes []node) []node {
	s.stopped = true
	nodes = append(nodes, s.nodes...)
	for _, c := range s.subs {
		nodes = c.stopLocked(nodes)
	}
	s.nodes, s.subs = nil, nil
	return nodes
}

// detachLocked removes nodes from the graph and renumbers the rest,
// keeping their order, so creation order still runs dependencies first.
func (g *Graph) detachLocked(nodes []node) {
	dead := make(map[node]bool, len(nodes))
	for _, n := range nodes {
		dead[n] = true
	}
	isDead := func(n node) bool { return dead[n] }
	g.nodes = slices.DeleteFunc(g.nodes, isDead)
	clear(g.nodes[len(g.nodes):cap(g.nodes)])
	g.unsynced = slices.DeleteFunc(g.unsynced, isDead)
	clear(g.unsynced[len(g.unsynced):cap(g.unsynced)])
	g.recorded = slices.DeleteFunc(g.recorded, isDead)
	clear(g.recorded[len(g.recorded):cap(g.recorded)])
	g.listNodesLocked()
	names := make([]string, len(g.nodes))
	for i, n := range g.nodes {
		n.(interface{ setID(int) }).setID(i)
		names[i] = n.nodeName()
	}
	clear(g.txn.touched[:cap(g.txn.touched)])
	g.txn.touched = g.txn.touched[:0]
	g.hmu.Lock()
	g.names = names
	g.hmu.Unlock()
}

func (s *store[T]) subGraph() *SubGraph { return s.sub }

// stop implements node for a collection with nothing but its store.
func (s *store[T]) stop(tx *Txn) { s.stopStore(tx) }

// stopStore empties s within tx and stops its handlers.
func (s *store[T]) stopStore(tx *Txn) {
	for _, k := range s.sortedKeys() {
		s.remove(tx, k)
	}
	s.g.deliverMu.Lock()
	defer s.g.deliverMu.Unlock()
	s.stopped = true
	for _, h := range s.handlers {
		h.stopOnce.Do(func() { close(h.stopped) }) // a later Unregister does nothing
		s.g.removeHandler(h)
	}
	s.handlers = nil
	// The indexes and reverse index stay: the transaction still uses them
	// to tell dependents of the deletes. They are empty now, and go with s.
}

func (s *store[T]) removeDown(d downstream) {
	s.downs = slices.DeleteFunc(s.downs, func(x downstream) bool { return x == d })
}

func (d *derived[I, O]) stop(tx *Txn) {
	d.stopStore(tx)
	for _, st := range d.inputs.all() {
		d.setReads(st, nil)
	}
	d.inputs, d.owners, d.outs, d.contested, d.failing, d.dirty = inputTable{}, nil, nil, nil, nil, nil
	if d.parent != nil {
		d.parent.removeDown(d)
	}
}

func (j *join[T]) stop(tx *Txn) {
	j.stopStore(tx)
	for _, src := range j.sources {
		src.removeDown(j)
	}
	j.sources, j.dirty = nil, nil
}
