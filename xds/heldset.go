package xds

import (
	"slices"
	"strings"
)

// heldSet is the resources one stream's type holds, one per name, kept
// sorted by name in a slice: a pointer per name, where a map from name
// to resource costs about six times that, and a hundred wildcard
// streams of 4,000 names each hold 400,000 entries. Looking a name up is
// a binary search; adding one in name order is an append, anywhere else
// a copy of the entries after it, so callers that add many names add
// them in order (typeState.diff, session.holdInitial). The zero value is
// empty.
type heldSet struct {
	rs []*resource
}

// search returns where name is, or would be inserted, and whether it is
// there.
func (h *heldSet) search(name string) (int, bool) {
	if n := len(h.rs); n > 0 && h.rs[n-1].name < name {
		return n, false // the common case of names added in order
	}
	return slices.BinarySearchFunc(h.rs, name, func(r *resource, name string) int {
		return strings.Compare(r.name, name)
	})
}

// get returns the resource held for name.
func (h *heldSet) get(name string) (*resource, bool) {
	if i, ok := h.search(name); ok {
		return h.rs[i], true
	}
	return nil, false
}

// has reports whether a resource is held for name.
func (h *heldSet) has(name string) bool {
	_, ok := h.search(name)
	return ok
}

// put holds r for its name, in place of what was held for it, and
// returns that.
func (h *heldSet) put(r *resource) (old *resource, had bool) {
	i, ok := h.search(r.name)
	if ok {
		old, h.rs[i] = h.rs[i], r
		return old, true
	}
	h.rs = slices.Insert(h.rs, i, r)
	return nil, false
}

// remove forgets name and returns what was held for it.
func (h *heldSet) remove(name string) (old *resource, had bool) {
	i, ok := h.search(name)
	if !ok {
		return nil, false
	}
	old = h.rs[i]
	h.rs = slices.Delete(h.rs, i, i+1)
	return old, true
}

// len returns the number of names held.
func (h *heldSet) len() int { return len(h.rs) }

// grow makes room for n more names.
func (h *heldSet) grow(n int) { h.rs = slices.Grow(h.rs, n) }

// names returns the names held, in order, as a copy: the caller may
// change the set while it walks them.
func (h *heldSet) names() []string {
	out := make([]string, len(h.rs))
	for i, r := range h.rs {
		out[i] = r.name
	}
	return out
}

// all returns the resources held, ordered by name. The slice is the
// set's own: read only, and valid until the set changes.
func (h *heldSet) all() []*resource { return h.rs }
