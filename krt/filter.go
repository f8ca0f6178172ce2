package krt

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Filter narrows what Fetch returns, and so which changes recompute the
// fetching input. Filters given together must all match. Each kind may be
// given once; a later one replaces an earlier one of the same kind.
//
// Key, index, label, selector and namespace filters are served from indexes
// and recorded in reverse indexes, so a change only recomputes the inputs
// whose filters it can affect. A FilterFunc predicate narrows the result
// but not the dependency: the fetch is recomputed on any change that the
// other filters let through.
type Filter struct {
	kind  filterKind
	key   string
	m     map[string]string
	index int
	owner any
	rare  *filterRare // keys and predicates
}

type filterKind uint8

const (
	filterKeys filterKind = iota + 1
	filterIndex
	filterNamespace
	filterLabels
	filterSelects
	filterFunc
)

// filterRare holds the parts of a filter that most fetches lack, so that
// every fetch record does not pay for them.
type filterRare struct {
	keys   []string
	pred   func(any) bool // every FilterFunc predicate, combined
	npreds int
	same   any       // func(old, new T) bool: a PartialFetch projection's equality
	one    [1]string // storage for a single key
}

type filterSet struct {
	// src is the reverse index of the collection filtered and down the
	// collection whose inputs read it, which the records of the reads
	// that share the filter need not each hold.
	src        *dependents
	down       *inputOwner
	rare       *filterRare
	indexKey   string
	ns         string
	labels     map[string]string // items whose labels match this selector
	selects    map[string]string // items whose selector selects these labels
	index      int32             // -1: none
	hasKeys    bool
	hasNS      bool
	hasLabels  bool
	hasSelects bool
	// memo is nil until the filter is shared by the reads of several
	// inputs, then their last query's result (see fetchmemo.go); read
	// and written atomically.
	memo unsafe.Pointer
	// aliases is nil until the filter is shared, then a *mapAliases of
	// the other maps known to equal selects; read and written atomically.
	aliases unsafe.Pointer
}

// keepFilter returns a copy of f, a filter of o's inputs, for a read's
// record to keep: when f filters nothing, as a read of a singleton does
// not, the one o's reads of f's collection without a filter share.
func (o *inputOwner) keepFilter(f *filterSet) *filterSet {
	if f.rare == nil && f.index < 0 && !f.hasKeys && !f.hasNS && !f.hasLabels && !f.hasSelects {
		return o.unfiltered(f)
	}
	kept := *f
	return &kept
}

// unfiltered returns the filter that o's reads of f's collection without
// a filter share, made on the first. Transformations of o's inputs may
// run in parallel, hence the lock; a collection reads a few others, so
// the list is short.
func (o *inputOwner) unfiltered(f *filterSet) *filterSet {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, u := range o.nothing {
		if u.src == f.src {
			return u
		}
	}
	u := &filterSet{index: -1, src: f.src, down: o}
	o.nothing = append(o.nothing, u)
	return u
}

// FilterKey keeps the item with the given key.
func FilterKey(key string) Filter {
	r := &filterRare{}
	r.one[0] = key
	r.keys = r.one[:]
	return Filter{kind: filterKeys, rare: r}
}

// FilterKeys keeps the items with any of the given keys.
func FilterKeys(keys ...string) Filter {
	return Filter{kind: filterKeys, rare: &filterRare{keys: slices.Clone(keys)}}
}

// FilterIndex keeps the items that idx files under key.
func FilterIndex[T any](idx Index[T], key string) Filter {
	return Filter{kind: filterIndex, index: idx.id, owner: idx.s, key: key}
}

// FilterNamespace keeps the items in namespace ns. The items must have a
// namespace (GetNamespace or WithNamespace), else Fetch fails with
// ErrNoAccessor.
func FilterNamespace(ns string) Filter { return Filter{kind: filterNamespace, key: ns} }

// FilterLabels keeps the items whose labels (see WithLabels) hold every
// key=value pair of selector: "the pods this service selects".
//
// A nil or empty selector selects nothing, as a Kubernetes Service with no
// selector selects no pods (its endpoints are managed by someone else); to
// keep every item, give no FilterLabels. This is the Service rule, not
// that of a metav1.LabelSelector, where an empty selector selects
// everything: convert such a selector before filtering.
//
// The fetched collection's items must have labels: a GetLabels method or
// the collection's WithLabels option. Without them Fetch fails the
// computation with ErrNoAccessor rather than match nothing. The map must
// not be modified afterwards: the engine keeps it to match later changes.
func FilterLabels(selector map[string]string) Filter { return Filter{kind: filterLabels, m: selector} }

// FilterSelects keeps the items whose own selector (see WithSelector)
// selects the given labels: the inverse of FilterLabels, as in "the
// Services that select this Pod". Items with a nil or empty selector
// select nothing, and empty labels are selected by nothing. The items
// must have a selector (GetSelector or WithSelector), else Fetch fails
// with ErrNoAccessor. The map must not be modified afterwards.
func FilterSelects(labels map[string]string) Filter { return Filter{kind: filterSelects, m: labels} }

// FilterFunc keeps the items for which keep returns true. It cannot be
// indexed: prefer the other filters where they apply.
func FilterFunc[T any](keep func(T) bool) Filter {
	return Filter{kind: filterFunc, rare: &filterRare{pred: func(v any) bool { return keep(v.(T)) }, npreds: 1}}
}

func (f *filterSet) add(fl Filter) {
	switch fl.kind {
	case filterKeys:
		f.hasKeys = true
		f.mergeRare(fl.rare, true)
	case filterIndex:
		f.index, f.indexKey = int32(fl.index), fl.key
	case filterNamespace:
		f.ns, f.hasNS = fl.key, true
	case filterLabels:
		f.labels, f.hasLabels = fl.m, true
	case filterSelects:
		f.selects, f.hasSelects = fl.m, true
	case filterFunc:
		f.mergeRare(fl.rare, false)
	}
}

// mergeRare adds a key or predicate filter's rare part. The common case,
// one such filter per fetch, shares the filter's own; a combination makes a
// new one, leaving the filters untouched.
func (f *filterSet) mergeRare(r *filterRare, isKeys bool) {
	if f.rare == nil {
		f.rare = r
		return
	}
	m := *f.rare
	m.one = [1]string{}
	if isKeys {
		m.keys = r.keys
	} else if prev, next := m.pred, r.pred; prev != nil {
		m.pred = func(v any) bool { return prev(v) && next(v) }
		m.npreds++
	} else {
		m.pred, m.npreds = next, 1
	}
	f.rare = &m
}

func (f *filterSet) keyList() []string {
	if f.rare == nil {
		return nil
	}
	return f.rare.keys
}

func (f *filterSet) predicate() func(any) bool {
	if f.rare == nil {
		return nil
	}
	return f.rare.pred
}

// projected returns the PartialFetch equality of the read, or nil.
func (f *filterSet) projected() any {
	if f.rare == nil {
		return nil
	}
	return f.rare.same
}

// equal reports whether two filter sets record the same dependency; sets
// with predicates never compare equal, as functions cannot be compared.
// f is the one kept the longer, whose aliases o's selects may be among.
func (f *filterSet) equal(o *filterSet) bool {
	return f.src == o.src && f.down == o.down && f.predicate() == nil && o.predicate() == nil && f.projected() == nil && o.projected() == nil &&
		f.hasKeys == o.hasKeys && slices.Equal(f.keyList(), o.keyList()) &&
		f.index == o.index && f.indexKey == o.indexKey &&
		f.hasNS == o.hasNS && f.ns == o.ns &&
		f.hasLabels == o.hasLabels && sameLabels(f.labels, o.labels) &&
		f.hasSelects == o.hasSelects && f.sameSelects(o.selects)
}

// sameLabels is maps.Equal, answering at once when a and b are one map:
// a recomputation usually filters with the very map its unchanged input
// holds, as the last computation did.
func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || mapID(a) == mapID(b) {
		return true
	}
	return maps.Equal(a, b)
}

// matches reports whether the item stored under key passes every filter.
func (s *store[T]) matches(f *filterSet, key string, v T) bool {
	return s.matchesExcept(f, key, v, 0)
}

// matchesExcept is matches without the check of kind, which the caller's
// access path already guarantees.
func (s *store[T]) matchesExcept(f *filterSet, key string, v T, done filterKind) bool {
	if f.hasKeys && done != filterKeys && !slices.Contains(f.keyList(), key) {
		return false
	}
	if f.index >= 0 && done != filterIndex && !slices.Contains(s.indexes[f.index].keys(v), f.indexKey) {
		return false
	}
	if f.hasNS && done != filterNamespace && (s.acc.namespace == nil || s.acc.namespace(v) != f.ns) {
		return false
	}
	if f.hasLabels && (len(f.labels) == 0 || !selectorMatches(f.labels, s.labelsOf(v))) {
		return false
	}
	if f.hasSelects && !s.selectedBy(f, v, done == filterSelects) {
		return false
	}
	if p := f.predicate(); p != nil && !p(v) {
		return false
	}
	return true
}

// selectedBy reports whether v's selector selects f's labels. indexed
// says the selector index gave v, under a pair of its selector that the
// labels hold (see candidates): a selector of one pair, the common case,
// then selects them, and its map need not be read again.
func (s *store[T]) selectedBy(f *filterSet, v T, indexed bool) bool {
	if s.acc.selector == nil {
		return false
	}
	sel := s.acc.selector(v)
	return indexed && len(sel) == 1 || selects(sel, f.selects)
}

// selectsNothing reports whether no item can pass f: an empty label
// selector selects nothing, and empty labels are selected by nothing.
func (f *filterSet) selectsNothing() bool {
	return (f.hasLabels && len(f.labels) == 0) || (f.hasSelects && len(f.selects) == 0)
}

// checkAccessors returns an ErrNoAccessor error when f filters on a part
// of an item that s's items do not have, which would match nothing.
func (s *store[T]) checkAccessors(f *filterSet) error {
	missing := func(filter, method, option string) error {
		return fmt.Errorf("fetch from %q: %s needs the items' %s, but %s has no %s method and the collection no %s option: %w",
			s.name, filter, strings.ToLower(strings.TrimPrefix(method, "Get")), typeName[T](), method, option, ErrNoAccessor)
	}
	switch {
	case f.hasLabels && s.acc.labels == nil:
		return missing("FilterLabels", "GetLabels", "WithLabels")
	case f.hasSelects && s.acc.selector == nil:
		return missing("FilterSelects", "GetSelector", "WithSelector")
	case f.hasNS && s.acc.namespace == nil:
		return missing("FilterNamespace", "GetNamespace", "WithNamespace")
	}
	return nil
}

func (s *store[T]) labelsOf(v T) map[string]string {
	if s.acc.labels == nil {
		return nil
	}
	return s.acc.labels(v)
}

// query returns the items passing f, ordered by key, reading through the
// most selective index available. The caller holds the write lock: query
// may build an index on first use.
func (s *store[T]) query(f *filterSet) []T {
	if f.selectsNothing() {
		return nil
	}
	if s.items.len() == 1 {
		return s.queryOne(f) // a singleton, most often: no slots to collect
	}
	scratch := querySlots.Get().(*[]int32)
	ids, done := s.candidates(f, (*scratch)[:0])
	defer func() { putQuerySlots(scratch, ids) }()
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		if sl := s.items.slot(id); s.matchesExcept(f, sl.key, sl.val, done) {
			out = append(out, sl.val)
		}
	}
	return out
}

// queryFirst returns the item passing f with the smallest key, as
// query(f)[0] would, without making the list.
func (s *store[T]) queryFirst(f *filterSet) (v T, ok bool) {
	if f.selectsNothing() {
		return v, false
	}
	if s.items.len() == 1 {
		return s.onlyIfMatches(f)
	}
	scratch := querySlots.Get().(*[]int32)
	ids, done := s.candidates(f, (*scratch)[:0])
	defer func() { putQuerySlots(scratch, ids) }()
	for _, id := range ids {
		if sl := s.items.slot(id); s.matchesExcept(f, sl.key, sl.val, done) {
			return sl.val, true
		}
	}
	return v, false
}

// queryOne is query of a collection holding one item.
func (s *store[T]) queryOne(f *filterSet) []T {
	if v, ok := s.onlyIfMatches(f); ok {
		return []T{v}
	}
	return nil
}

// onlyIfMatches returns the item of a collection holding one, if it
// passes f.
func (s *store[T]) onlyIfMatches(f *filterSet) (v T, ok bool) {
	for _, sl := range s.items.all() {
		if s.matches(f, sl.key, sl.val) {
			return sl.val, true
		}
	}
	return v, false
}

// candidates appends to ids, ordered by key and each once, the slots of
// the items that may pass f, and returns them with the filter the access
// path guarantees. An index bucket small enough to keep its slots ordered
// needs no sort.
func (s *store[T]) candidates(f *filterSet, ids []int32) ([]int32, filterKind) {
	var done filterKind
	ordered := false
	appendSet := func(set *keySet) {
		ordered = set.sorted()
		ids = set.appendTo(ids)
	}
	switch {
	case f.hasKeys:
		return s.keySlots(f.keyList(), ids), filterKeys
	case f.index >= 0:
		done = filterIndex
		appendSet(s.indexes[f.index].m[f.indexKey])
	case f.hasLabels && len(f.labels) > 0 && s.acc.labels != nil:
		s.ensureLabelIndex()
		p, _ := minPair(f.labels)
		appendSet(s.labelIdx[p])
	case f.hasSelects:
		s.ensureSelectorIndex()
		done = filterSelects
		// Each item is filed under one pair only, so no slot repeats.
		for k, v := range f.selects {
			appendSet(s.selIdx[labelPair{k, v}])
		}
		ordered = ordered && len(f.selects) == 1
	case f.hasNS:
		s.ensureNamespaceIndex()
		done = filterNamespace
		appendSet(s.nsIdx[f.ns])
	default:
		ids = slices.Grow(ids, s.items.len())
		for id := range s.items.all() {
			ids = append(ids, id)
		}
	}
	if !ordered && len(ids) > 1 {
		s.items.sortIDs(ids)
	}
	return ids, done
}

// keySlots appends the slots of the items under keys, ordered by key and
// each once, to ids.
func (s *store[T]) keySlots(keys []string, ids []int32) []int32 {
	for _, k := range keys {
		if id, ok := s.items.find(k); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) > 1 {
		s.items.sortIDs(ids)
		ids = slices.Compact(ids) // a key given twice has one slot
	}
	return ids
}

// filterString renders f for introspection.
func (s *store[T]) filterString(f *filterSet) string {
	var parts []string
	if f.hasKeys {
		parts = append(parts, "key="+strings.Join(f.keyList(), ","))
	}
	if f.index >= 0 && int(f.index) < len(s.indexes) {
		parts = append(parts, fmt.Sprintf("index %s=%s", s.indexes[f.index].name, f.indexKey))
	}
	if f.hasNS {
		parts = append(parts, "namespace="+f.ns)
	}
	if f.hasLabels {
		parts = append(parts, "labels match "+formatLabels(f.labels))
	}
	if f.hasSelects {
		parts = append(parts, "selector selects "+formatLabels(f.selects))
	}
	if f.rare != nil && f.rare.npreds > 0 {
		parts = append(parts, fmt.Sprintf("%d predicate(s)", f.rare.npreds))
	}
	if f.projected() != nil {
		parts = append(parts, "projected")
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " ")
}

func formatLabels(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// querySlots holds the arrays query collects slots in, which it needs
// only until it has read their items: a fetch allocates its result alone.
var querySlots = sync.Pool{New: func() any { return new([]int32) }}

func putQuerySlots(scratch *[]int32, ids []int32) {
	if cap(ids) > 16384 { // a scan of a large collection: let it go
		return
	}
	*scratch = ids[:0]
	querySlots.Put(scratch)
}
