package krt

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// GraphInfo describes every collection of a graph and how they read each
// other. It is a plain value, safe to encode as JSON.
type GraphInfo struct {
	Version     uint64           `json:"version"`
	Collections []CollectionInfo `json:"collections"`
	Edges       []Edge           `json:"edges"`
	// Stalled is the transformation running past the stall threshold, if
	// Run's watchdog has found one (see WithStallThreshold).
	Stalled *Stall `json:"stalled,omitempty"`
	// EdgesStale is set when a transaction was running, so Edges are those
	// of the last description made between transactions.
	EdgesStale bool `json:"edgesStale,omitempty"`
	// Queue counts the updates queued with UpdateLater.
	Queue QueueInfo `json:"queue"`
}

// CollectionInfo describes one collection.
type CollectionInfo struct {
	ID       int      `json:"id"`
	Name     string   `json:"name"`
	Kind     string   `json:"kind"` // static, collection, many, singleton, join
	Type     string   `json:"type"` // the item type
	Size     int      `json:"size"`
	Synced   bool     `json:"synced"`
	Handlers int      `json:"handlers"`
	Indexes  []string `json:"indexes,omitempty"`

	// Recomputes counts the inputs processed: transformations run by a
	// derived collection, keys re-evaluated by a join; 0 for a static one.
	Recomputes uint64 `json:"recomputes"`
	// EventsEmitted counts the outputs added, changed or deleted: the
	// events handed to handlers, whether or not any is registered.
	EventsEmitted uint64 `json:"eventsEmitted"`
	// Errors counts failed computations: errors, panics, key conflicts.
	Errors uint64 `json:"errors"`
	// FailingInputs is the number of inputs whose last computation failed
	// and that serve their last good output.
	FailingInputs int `json:"failingInputs"`
	// Conflicts is the number of output keys claimed by several inputs.
	Conflicts int `json:"conflicts"`
	// Stalls counts transformations of the collection reported as running
	// past the stall threshold.
	Stalls uint64 `json:"stalls"`

	// RecomputeBuckets counts recompute durations per HistogramBounds()
	// bucket (the last is +Inf); RecomputeSeconds is their sum.
	RecomputeBuckets []uint64 `json:"recomputeBuckets"`
	RecomputeSeconds float64  `json:"recomputeSeconds"`

	RecentErrors []ErrorRecord `json:"recentErrors,omitempty"`
	RecentEvents []EventRecord `json:"recentEvents,omitempty"`
}

// Edge says that collection To reads collection From.
type Edge struct {
	From int    `json:"from"`
	To   int    `json:"to"`
	Kind string `json:"kind"` // primary, fetch, index, join
	// Reads is the number of recorded reads behind a fetch or index edge.
	Reads int `json:"reads,omitempty"`
}

// Explanation says why an output exists: which input produced it and what
// that input's last computation read.
type Explanation struct {
	Collection string       `json:"collection"`
	Key        string       `json:"key"`
	Exists     bool         `json:"exists"`
	Input      string       `json:"input,omitempty"`
	InputFrom  string       `json:"inputFrom,omitempty"`
	Reads      []Read       `json:"reads,omitempty"`
	Contenders []string     `json:"contenders,omitempty"`
	LastError  *ErrorRecord `json:"lastError,omitempty"`
}

// Read is one dependency recorded by a computation.
type Read struct {
	Collection string `json:"collection"`
	Filter     string `json:"filter"`
}

// Item is one item of a collection, for dumps.
type Item struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// Describe returns a description of every collection at the last
// committed version. It never waits for a running transaction: the
// edges, which the writer's bookkeeping holds, are then those of the last
// description made between transactions (EdgesStale).
func (g *Graph) Describe() GraphInfo {
	nodes := *g.listed.Load()
	info := GraphInfo{Version: g.version.Load(), Stalled: g.currentStall(), Queue: g.queue.info()}
	for id, n := range nodes {
		info.Collections = append(info.Collections, n.describe(id, info.Version))
	}
	if g.lock.lockWithin(0) {
		for _, n := range *g.listed.Load() {
			n.cacheEdges()
		}
		g.lock.unlock()
	} else {
		info.EdgesStale = true
	}
	for _, n := range nodes {
		info.Edges = append(info.Edges, n.cachedEdges()...)
	}
	return info
}

// explainPatience is how long Explain waits for a running transaction.
const explainPatience = 200 * time.Millisecond

// Explain says why key exists in the named collection. It reads the
// writer's bookkeeping, so it waits for a running transaction, but for at
// most explainPatience: then it returns ErrBusy.
func (g *Graph) Explain(collection, key string) (Explanation, error) {
	if !g.lock.lockWithin(explainPatience) {
		b := g.Busy()
		return Explanation{}, fmt.Errorf("collection %q key %q: %s has been computing for %v: %w",
			collection, key, b.Collection, b.For.Round(time.Millisecond), ErrBusy)
	}
	defer g.lock.unlock()
	n := g.nodeByName(collection)
	if n == nil {
		return Explanation{}, fmt.Errorf("collection %q: %w", collection, ErrNotFound)
	}
	e, ok := n.explain(key)
	if !ok {
		return e, fmt.Errorf("collection %q key %q: %w", collection, key, ErrNotFound)
	}
	return e, nil
}

// Items returns up to limit items of the named collection whose keys start
// with prefix, skipping the first offset, ordered by key, and the number of
// matching items, at the last committed version. It never waits for a
// running transaction.
func (g *Graph) Items(collection, prefix string, offset, limit int) ([]Item, int, error) {
	n := g.nodeByName(collection)
	if n == nil {
		return nil, 0, fmt.Errorf("collection %q: %w", collection, ErrNotFound)
	}
	items, total := n.dumpItems(g.version.Load(), prefix, offset, limit)
	return items, total, nil
}

func (g *Graph) nodeByName(name string) node {
	for _, n := range *g.listed.Load() {
		if n.nodeName() == name {
			return n
		}
	}
	return nil
}

func (s *store[T]) recordError(key string, err error, stack string) {
	s.stats.errors.Add(1)
	s.hist.error(ErrorRecord{Time: time.Now(), Key: key, Error: err.Error(), Stack: stack})
	if stack != "" {
		// A panic is a bug: its stack is what the reader needs.
		s.g.log.Error("collection error", "collection", s.name, "key", key, "error", err, "stack", stack)
		return
	}
	s.g.log.Error("collection error", "collection", s.name, "key", key, "error", err)
}

// describe reports the collection, as node id, at version v. It reads
// only what readers may read while a transaction runs.
func (s *store[T]) describe(id int, v uint64) CollectionInfo {
	errs, evs := s.hist.snapshot()
	buckets, sum := s.stats.durations.snapshot()
	ci := CollectionInfo{
		ID: id, Name: s.name, Kind: s.kind, Type: typeName[T](),
		Size: s.lenAt(v), Synced: s.HasSynced(), Handlers: int(s.stats.handlers.Load()),
		Recomputes: s.stats.recomputes.Load(), EventsEmitted: s.stats.events.Load(),
		Errors: s.stats.errors.Load(), Stalls: s.stats.stalls.Load(),
		FailingInputs: int(s.stats.failing.Load()), Conflicts: int(s.stats.conflicts.Load()),
		RecomputeBuckets: buckets, RecomputeSeconds: sum.Seconds(),
		RecentErrors: errs, RecentEvents: evs,
	}
	s.mu.RLock()
	for _, ix := range s.indexes {
		ci.Indexes = append(ci.Indexes, ix.name)
	}
	s.mu.RUnlock()
	return ci
}

// cacheEdges implements node; the caller holds the write lock.
func (s *store[T]) cacheEdges() {
	edges := s.self().edges()
	s.edgeCache.Store(&edges)
}

// cachedEdges implements node.
func (s *store[T]) cachedEdges() []Edge {
	if e := s.edgeCache.Load(); e != nil {
		return *e
	}
	return nil
}

func (s *store[T]) edges() []Edge { return nil }

func (d *derived[I, O]) edges() []Edge {
	var out []Edge
	if d.parent != nil {
		out = append(out, Edge{From: d.parent.id, To: d.id, Kind: "primary"})
	}
	type ek struct {
		from int
		kind string
	}
	counts := map[ek]int{}
	for _, st := range d.inputs.all() {
		st.reads.each(func(r *fetchRec) {
			kind := "fetch"
			if r.filter.index >= 0 {
				kind = "index"
			}
			counts[ek{r.up().nodeID(), kind}]++
		})
	}
	for k, n := range counts {
		out = append(out, Edge{From: k.from, To: d.id, Kind: k.kind, Reads: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

func (j *join[T]) edges() []Edge {
	out := make([]Edge, len(j.sources))
	for i, s := range j.sources {
		out[i] = Edge{From: s.id, To: j.id, Kind: "join"}
	}
	return out
}

func (s *store[T]) explain(key string) (Explanation, bool) {
	ok := s.items.has(key)
	return Explanation{Collection: s.name, Key: key, Exists: ok}, ok
}

func (d *derived[I, O]) explain(key string) (Explanation, bool) {
	e, ok := d.store.explain(key)
	input, owned := d.ownerOf(key)
	if !owned {
		return e, ok
	}
	e.Input = input
	if d.parent != nil {
		e.InputFrom = d.parent.name
	}
	if st := d.inputs.get(input); st != nil {
		st.reads.each(func(r *fetchRec) {
			e.Reads = append(e.Reads, Read{Collection: r.up().nodeName(), Filter: r.up().filterString(r.filter)})
		})
	}
	for in := range d.contested[key] {
		if in != input {
			e.Contenders = append(e.Contenders, in)
		}
	}
	sort.Strings(e.Contenders)
	if err, failing := d.failing[input]; failing {
		e.LastError = &ErrorRecord{Key: input, Error: err.Error()}
	}
	return e, ok
}

func (s *store[T]) dumpItems(v uint64, prefix string, offset, limit int) ([]Item, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := s.keysAtLocked(v)
	keys = slices.DeleteFunc(keys, func(k string) bool { return !strings.HasPrefix(k, prefix) })
	sort.Strings(keys)
	total := len(keys)
	keys = keys[min(offset, total):]
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]Item, len(keys))
	for i, k := range keys {
		item, _ := s.valueAtLocked(v, k)
		out[i] = Item{Key: k, Value: item}
	}
	return out, total
}
