package krt

import (
	"reflect"
	"sync"
)

// PartialFetch is Fetch for a transformation that needs only part of each
// item: it returns project applied to the items of c passing every filter,
// ordered by item key, and recomputes the calling input only when an item
// enters or leaves that result or its projection changes. A change to a
// part of an item outside the projection, such as a pod's status when the
// transformation reads its IP, recomputes nothing.
//
// Projections are compared with P's Equals(P) bool method when it has one,
// else with reflect.DeepEqual. project must be a pure function of the item:
// it runs again, on the old and new values, for every change that passes
// the filters.
func PartialFetch[T, P any](ctx HandlerContext, c Collection[T], project func(T) P, filters ...Filter) []P {
	eq := equalFor[P]()
	same := func(a, b T) bool { return eq(project(a), project(b)) }
	items := fetch(ctx, c, filters, same)
	out := make([]P, len(items))
	for i, v := range items {
		out[i] = project(v)
	}
	return out
}

// equalities caches, by type, the equality PartialFetch compares
// projections with: a method lookup by reflection costs more than most
// projections.
var equalities sync.Map // reflect.Type -> func(a, b P) bool

func equalFor[P any]() func(a, b P) bool {
	t := reflect.TypeFor[P]()
	if eq, ok := equalities.Load(t); ok {
		return eq.(func(a, b P) bool)
	}
	eq := method[P, func(P, P) bool]("Equals")
	if eq == nil {
		eq = func(a, b P) bool { return reflect.DeepEqual(a, b) }
	}
	equalities.Store(t, eq)
	return eq
}
