package krt

import "slices"

// fetchRec is one recorded read: input in fetched with filter from the
// collection whose reverse index filter.src is, and in which the record
// is filed (see dependents). Each input makes a few and a graph holds
// them by the hundred thousand, hence two pointers alone: the filter,
// which the reads of one collection without one share (see keepFilter
// and shareFilter), names what was read, so that the records sharing it
// need not.
type fetchRec struct {
	in     *inputState
	filter *filterSet // its content never changed once recorded
}

// up returns the collection the read is of.
func (r *fetchRec) up() upstream { return r.filter.src.owner }

// dependents is a collection's reverse index: which reads of it, by which
// inputs of which collections, a change to a given item can affect. Each
// read is filed under the buckets its filter's most selective part names,
// one map per kind of part, so that each is keyed by what it needs and
// nothing more.
type dependents struct {
	owner     upstream              // the collection whose reverse index this is
	all       recSet                // reads no change escapes
	byKey     map[string]*recSet    // FilterKey(s), under each key
	byIndex   []map[string]*recSet  // FilterIndex, by index id, under its key
	byNS      map[string]*recSet    // FilterNamespace
	byLabel   map[labelPair]*recSet // FilterLabels, under its smallest requirement
	bySelects map[labelPair]*recSet // FilterSelects, under each of its labels
	total     int
}

// file adds rec to the buckets its filter names, or removes it from them.
func (d *dependents) file(rec *fetchRec, add bool) {
	f := rec.filter
	switch {
	case f.selectsNothing(): // no change can matter: file nothing
	case f.hasKeys:
		for _, k := range f.keyList() {
			d.total += fileIn(&d.byKey, k, rec, add)
		}
	case f.index >= 0:
		if int(f.index) >= len(d.byIndex) {
			d.byIndex = append(d.byIndex, make([]map[string]*recSet, int(f.index)+1-len(d.byIndex))...)
		}
		d.total += fileIn(&d.byIndex[f.index], f.indexKey, rec, add)
	case f.hasLabels && len(f.labels) > 0:
		p, _ := minPair(f.labels)
		d.total += fileIn(&d.byLabel, p, rec, add)
	case f.hasSelects:
		for k, v := range f.selects { // empty labels: selected by nothing
			d.total += fileIn(&d.bySelects, labelPair{k, v}, rec, add)
		}
	case f.hasNS:
		d.total += fileIn(&d.byNS, f.ns, rec, add)
	default:
		d.total += fileSet(&d.all, rec, add)
	}
}

// fileIn adds rec to, or removes it from, the bucket of m under k, and
// returns the change in the number of filed reads.
func fileIn[K comparable](m *map[K]*recSet, k K, rec *fetchRec, add bool) int {
	set := (*m)[k]
	if set == nil {
		if !add {
			return 0
		}
		if *m == nil {
			*m = map[K]*recSet{}
		}
		set = &recSet{}
		(*m)[k] = set
	}
	if add {
		shareFilter(set, rec)
	}
	n := fileSet(set, rec, add)
	if set.len() == 0 {
		delete(*m, k)
	}
	return n
}

// shareFilter points rec at the filter of a read filed in the same small
// bucket when the two are equal. The reads of the inputs that share a
// bucket often filter alike (the pods of one service, each fetching the
// services that select its labels), and a filter is never changed once
// recorded, so they can hold one copy. Only the writer files reads, and
// nothing reads rec's filter while it does.
//
// Reads sharing a filter are filed one after another, so the scan compares
// rec once per run of one filter: a bucket of ten reads that share a
// filter costs one comparison, not ten.
func shareFilter(set *recSet, rec *fetchRec) {
	if set.many != nil {
		return // a bucket this large is not worth the scan
	}
	var compared *filterSet
	for _, x := range set.few {
		switch {
		case x.filter == rec.filter:
			return // rec shares it already
		case x.filter == compared:
			continue
		}
		compared = x.filter
		if x.filter.equal(rec.filter) {
			x.filter.learnAlias(rec.filter.selects)
			rec.filter = x.filter
			x.filter.markShared()
			return
		}
	}
}

// fileSet adds rec to, or removes it from, set.
func fileSet(set *recSet, rec *fetchRec, add bool) int {
	switch {
	case add && set.add(rec):
		return 1
	case !add && set.remove(rec):
		return -1
	}
	return 0
}

func (s *store[T]) addDep(rec *fetchRec)    { s.deps.file(rec, true) }
func (s *store[T]) removeDep(rec *fetchRec) { s.deps.file(rec, false) }

// trigger marks dirty every recorded read that the change of key from old
// to nv can affect: those filed under a bucket the change touches whose
// full filter matches the old or the new value. A change usually leaves
// the item under the buckets it was under; those are visited once.
func (s *store[T]) trigger(tx *Txn, key string, old T, hadOld bool, nv T, hasNew bool) {
	d := &s.deps
	if d.total == 0 {
		return
	}
	hit := func(rec *fetchRec) {
		// An input already marked gains nothing from a second mark: skip
		// matching its filter, as a change of many items that one input
		// read (a service's pods) would repeat it for each.
		if !rec.in.dirty && s.affects(rec.filter, key, old, hadOld, nv, hasNew) {
			rec.filter.down.d.markInput(tx, rec.in)
		}
	}
	visit := func(set *recSet) {
		expectDirty(set)
		set.each(hit)
	}
	visit(&d.all)
	if len(d.byKey) > 0 {
		visit(d.byKey[key])
	}
	if len(d.byNS) > 0 && s.acc.namespace != nil {
		var ons string
		if hadOld {
			ons = s.acc.namespace(old)
			visit(d.byNS[ons])
		}
		if hasNew {
			if nns := s.acc.namespace(nv); !hadOld || nns != ons {
				visit(d.byNS[nns])
			}
		}
	}
	if len(d.byIndex) > 0 {
		s.triggerIndexes(visit, old, hadOld, nv, hasNew)
	}
	if len(d.byLabel) > 0 || len(d.bySelects) > 0 {
		s.triggerPairs(visit, old, hadOld, nv, hasNew)
	}
}

// triggerPairs visits the label and selector buckets of the old and the
// new value, those both are filed under once.
func (s *store[T]) triggerPairs(visit func(*recSet), old T, hadOld bool, nv T, hasNew bool) {
	d := &s.deps
	if len(d.byLabel) > 0 && s.acc.labels != nil {
		var ol map[string]string
		if hadOld {
			ol = s.acc.labels(old)
			for k, lv := range ol {
				visit(d.byLabel[labelPair{k, lv}])
			}
		}
		if hasNew {
			for k, lv := range s.acc.labels(nv) {
				if ov, ok := ol[k]; !hadOld || !ok || ov != lv {
					visit(d.byLabel[labelPair{k, lv}])
				}
			}
		}
	}
	if len(d.bySelects) > 0 && s.acc.selector != nil {
		op, oOK := labelPair{}, false
		if hadOld {
			if op, oOK = minPair(s.acc.selector(old)); oOK {
				visit(d.bySelects[op])
			}
		}
		if hasNew {
			if p, ok := minPair(s.acc.selector(nv)); ok && (!oOK || p != op) {
				visit(d.bySelects[p])
			}
		}
	}
}

// expectDirty tells the dependent of a large bucket's reads how many
// inputs it is about to be told of. A large bucket is usually the reads of
// every input of one collection, as of a singleton that all of them read.
func expectDirty(set *recSet) {
	if n := set.len(); n > 64 {
		if e, ok := set.any().filter.down.d.(interface{ expectDirty(n int) }); ok {
			e.expectDirty(n)
		}
	}
}

// triggerIndexes visits the index buckets of the old and the new value,
// those both are filed under once.
func (s *store[T]) triggerIndexes(visit func(*recSet), old T, hadOld bool, nv T, hasNew bool) {
	for idx, m := range s.deps.byIndex {
		if len(m) == 0 {
			continue
		}
		keys := s.indexes[idx].keys
		var oks []string
		if hadOld {
			oks = keys(old)
			for _, ik := range oks {
				visit(m[ik])
			}
		}
		if hasNew {
			for _, ik := range keys(nv) {
				if !hadOld || !slices.Contains(oks, ik) {
					visit(m[ik])
				}
			}
		}
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
