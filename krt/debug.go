package krt

import (
	"fmt"
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

// Describe returns a consistent description of every collection.
func (g *Graph) Describe() GraphInfo {
	g.lock.rlock()
	defer g.lock.runlock()
	info := GraphInfo{Version: g.version}
	for _, n := range g.nodes {
		info.Collections = append(info.Collections, n.describe())
		info.Edges = append(info.Edges, n.edges()...)
	}
	return info
}

// Explain says why key exists in the named collection.
func (g *Graph) Explain(collection, key string) (Explanation, error) {
	g.lock.rlock()
	defer g.lock.runlock()
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
// matching items.
func (g *Graph) Items(collection, prefix string, offset, limit int) ([]Item, int, error) {
	g.lock.rlock()
	defer g.lock.runlock()
	n := g.nodeByName(collection)
	if n == nil {
		return nil, 0, fmt.Errorf("collection %q: %w", collection, ErrNotFound)
	}
	items, total := n.dumpItems(prefix, offset, limit)
	return items, total, nil
}

func (g *Graph) nodeByName(name string) node {
	for _, n := range g.nodes {
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

func (s *store[T]) describe() CollectionInfo {
	errs, evs := s.hist.snapshot()
	buckets, sum := s.stats.durations.snapshot()
	ci := CollectionInfo{
		ID: s.id, Name: s.name, Kind: s.kind, Type: typeName[T](),
		Size: len(s.items), Synced: s.synced, Handlers: len(s.handlers),
		Recomputes: s.stats.recomputes.Load(), EventsEmitted: s.stats.events.Load(),
		Errors: s.stats.errors.Load(), RecomputeBuckets: buckets, RecomputeSeconds: sum.Seconds(),
		RecentErrors: errs, RecentEvents: evs,
	}
	for _, ix := range s.indexes {
		ci.Indexes = append(ci.Indexes, ix.name)
	}
	return ci
}

func (d *derived[I, O]) describe() CollectionInfo {
	ci := d.store.describe()
	ci.FailingInputs = len(d.failing)
	ci.Conflicts = len(d.contested)
	return ci
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
	for _, st := range d.inputs {
		for _, r := range st.deps {
			kind := "fetch"
			if r.filter.index >= 0 {
				kind = "index"
			}
			counts[ek{r.up.nodeID(), kind}]++
		}
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
	_, ok := s.items[key]
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
	if st := d.inputs[input]; st != nil {
		for _, r := range st.deps {
			e.Reads = append(e.Reads, Read{Collection: r.up.nodeName(), Filter: r.up.filterString(&r.filter)})
		}
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

func (s *store[T]) dumpItems(prefix string, offset, limit int) ([]Item, int) {
	keys := make([]string, 0)
	for k := range s.items {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	total := len(keys)
	if offset > total {
		offset = total
	}
	keys = keys[offset:]
	if limit > 0 && len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]Item, len(keys))
	for i, k := range keys {
		out[i] = Item{Key: k, Value: s.items[k]}
	}
	return out, total
}
