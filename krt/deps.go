package krt

// fetchRec is one recorded read: input of collection down fetched from up
// with filter. It is filed in up's reverse index under the buckets that
// the filter's most selective part names.
type fetchRec struct {
	down   dependent
	input  string
	up     upstream
	filter filterSet
}

type bucketKind uint8

const (
	bucketAll bucketKind = iota
	bucketByKey
	bucketIndex
	bucketNamespace
	bucketLabel   // a FilterLabels selector, under its smallest requirement
	bucketSelects // a FilterSelects label set, under each of its labels
	numBucketKinds
)

type bucketKey struct {
	kind bucketKind
	idx  int
	a, b string
}

// dependents is a collection's reverse index: which reads of it, by which
// inputs of which collections, a change to a given item can affect.
type dependents struct {
	buckets  map[bucketKey]map[*fetchRec]struct{}
	perKind  [numBucketKinds]int
	perIndex map[int]int
	total    int
}

// forBuckets calls fn with each bucket a read with filter f is filed under.
// It allocates nothing, so records need not keep their buckets.
func forBuckets(f *filterSet, fn func(bucketKey)) {
	switch {
	case f.selectsNothing(): // no change can matter: file nothing
	case f.hasKeys:
		for _, k := range f.keyList() {
			fn(bucketKey{kind: bucketByKey, a: k})
		}
	case f.index >= 0:
		fn(bucketKey{kind: bucketIndex, idx: int(f.index), a: f.indexKey})
	case f.hasLabels && len(f.labels) > 0:
		p, _ := minPair(f.labels)
		fn(bucketKey{kind: bucketLabel, a: p.k, b: p.v})
	case f.hasSelects:
		for k, v := range f.selects { // empty labels: selected by nothing
			fn(bucketKey{kind: bucketSelects, a: k, b: v})
		}
	case f.hasNS:
		fn(bucketKey{kind: bucketNamespace, a: f.ns})
	default:
		fn(bucketKey{kind: bucketAll})
	}
}

func (s *store[T]) addDep(rec *fetchRec) {
	d := &s.deps
	if d.buckets == nil {
		d.buckets = map[bucketKey]map[*fetchRec]struct{}{}
		d.perIndex = map[int]int{}
	}
	forBuckets(&rec.filter, func(b bucketKey) {
		set := d.buckets[b]
		if set == nil {
			set = map[*fetchRec]struct{}{}
			d.buckets[b] = set
		}
		set[rec] = struct{}{}
		d.perKind[b.kind]++
		if b.kind == bucketIndex {
			d.perIndex[b.idx]++
		}
		d.total++
	})
}

func (s *store[T]) removeDep(rec *fetchRec) {
	d := &s.deps
	forBuckets(&rec.filter, func(b bucketKey) {
		set := d.buckets[b]
		if _, ok := set[rec]; !ok {
			return
		}
		delete(set, rec)
		if len(set) == 0 {
			delete(d.buckets, b)
		}
		d.perKind[b.kind]--
		if b.kind == bucketIndex {
			d.perIndex[b.idx]--
		}
		d.total--
	})
}

// trigger marks dirty every recorded read that the change of key from old
// to nv can affect: those filed under a bucket the change touches whose
// full filter matches the old or the new value.
func (s *store[T]) trigger(tx *Txn, key string, old T, hadOld bool, nv T, hasNew bool) {
	d := &s.deps
	if d.total == 0 {
		return
	}
	visit := func(b bucketKey) {
		for rec := range d.buckets[b] {
			if s.affects(&rec.filter, key, old, hadOld, nv, hasNew) {
				rec.down.markDirty(tx, rec.input)
			}
		}
	}
	both := func(fn func(v T)) {
		if hadOld {
			fn(old)
		}
		if hasNew {
			fn(nv)
		}
	}
	if d.perKind[bucketAll] > 0 {
		visit(bucketKey{kind: bucketAll})
	}
	if d.perKind[bucketByKey] > 0 {
		visit(bucketKey{kind: bucketByKey, a: key})
	}
	if d.perKind[bucketNamespace] > 0 && s.acc.namespace != nil {
		both(func(v T) { visit(bucketKey{kind: bucketNamespace, a: s.acc.namespace(v)}) })
	}
	if d.perKind[bucketIndex] > 0 {
		for idx, n := range d.perIndex {
			if n == 0 {
				continue
			}
			both(func(v T) {
				for _, ik := range s.indexes[idx].keys(v) {
					visit(bucketKey{kind: bucketIndex, idx: idx, a: ik})
				}
			})
		}
	}
	if d.perKind[bucketLabel] > 0 && s.acc.labels != nil {
		both(func(v T) {
			for k, lv := range s.acc.labels(v) {
				visit(bucketKey{kind: bucketLabel, a: k, b: lv})
			}
		})
	}
	if d.perKind[bucketSelects] > 0 && s.acc.selector != nil {
		both(func(v T) {
			if p, ok := minPair(s.acc.selector(v)); ok {
				visit(bucketKey{kind: bucketSelects, a: p.k, b: p.v})
			}
		})
	}
}

// affects reports whether a read with filter f sees the change of key from
// old to nv: the item passes f before or after it, and, for a PartialFetch,
// it entered or left the result or its projection changed.
func (s *store[T]) affects(f *filterSet, key string, old T, hadOld bool, nv T, hasNew bool) bool {
	inOld := hadOld && s.matches(f, key, old)
	same, partial := f.projected().(func(a, b T) bool)
	if inOld && !partial {
		return true
	}
	inNew := hasNew && s.matches(f, key, nv)
	if inOld && inNew {
		return !same(old, nv)
	}
	return inOld || inNew
}
