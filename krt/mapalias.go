package krt

import (
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"
)

// aliasCap is how many other maps one shared filter remembers as equal
// to its own selects map: enough for the replicas of most deployments.
const aliasCap = 16

// mapAliases lists maps, other than a shared filter's own selects map,
// whose content was found equal to it when their reads were filed (see
// shareFilter): the label maps of a service's other pods, when a source
// gives each pod a map of its own, as one that does not intern them does.
// A recomputation that filters with one of them then matches its kept
// filter by pointer rather than by comparing the maps, which a
// mesh-config change would otherwise do once per pod, each a cache miss
// on the shared map. Reads are filed one at a time (by the writer, or by
// a worker holding its run's filing lock), so adds never race each other;
// computations may read meanwhile, and an entry is written before n
// counts it.
type mapAliases struct {
	n    atomic.Int32
	maps [aliasCap]unsafe.Pointer
}

// mapID is m's identity; holding it keeps m alive, so it is never
// another map's.
func mapID(m map[string]string) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

// sameSelects reports whether m holds what f's selects map does: at once
// when m is one of f's aliases, else as sameLabels does.
func (f *filterSet) sameSelects(m map[string]string) bool {
	if a := (*mapAliases)(atomic.LoadPointer(&f.aliases)); a != nil && len(m) > 0 && slices.Contains(a.maps[:a.n.Load()], mapID(m)) {
		return true
	}
	return sameLabels(f.selects, m)
}

// learnAlias records m, found equal to f's selects map, as its alias.
// Only the goroutine filing reads calls it.
func (f *filterSet) learnAlias(m map[string]string) {
	if !f.hasSelects || len(m) == 0 {
		return
	}
	id := mapID(m)
	if id == mapID(f.selects) {
		return
	}
	a := (*mapAliases)(atomic.LoadPointer(&f.aliases))
	if a == nil {
		a = &mapAliases{}
		atomic.StorePointer(&f.aliases, unsafe.Pointer(a))
	}
	n := a.n.Load()
	if n == aliasCap || slices.Contains(a.maps[:n], id) {
		return
	}
	a.maps[n] = id
	a.n.Store(n + 1)
}
