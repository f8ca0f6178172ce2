package xds

import (
	"slices"
	"strings"
)

// The first response of a wildcard subscription. A client that connects
// and asks for every Listener or Cluster holds nothing yet: it is sent
// every resource of the type but those served by name only, and so is
// every other wildcard client of the same variant that connects while
// the cache holds the same resources. So that response's resources,
// sorted by name, and their digest are built once per cache generation
// and type (view.wildcardFirst) and shared: a stream copies the sorted
// slice into what it holds, rather than looking up, sorting and holding
// the names one by one.

// wildcardFirst is the first response of a wildcard subscription to one
// type at one cache generation.
type wildcardFirst struct {
	gen uint64
	// resources are ordered by name; read only.
	resources []*resource
	// digest is that of every (name, version) pair of resources.
	digest digest
}

func newWildcardFirst(cur map[string]*resource, gen uint64) *wildcardFirst {
	f := &wildcardFirst{gen: gen, resources: make([]*resource, 0, len(cur))}
	for _, r := range cur {
		if !r.namedOnly {
			f.resources = append(f.resources, r)
			f.digest.add(r.pair)
		}
	}
	slices.SortFunc(f.resources, func(a, b *resource) int { return strings.Compare(a.name, b.name) })
	return f
}

// diff brings ts up to date for names against the current resources cur
// (ts.diff), taking a wildcard subscription's first response from the
// shared one where it can: the client holds nothing and was sent nothing
// unanswered of the type, names no resource of it explicitly, and nothing
// is hidden from it or to be sent again.
func (s *session) diff(ts *typeState, v view, names, resend map[string]struct{}, cur map[string]*resource, hidden func(*resource) bool) (changed []*resource, removed []string) {
	if !ts.wildcard || ts.names.len() > 0 || hidden != nil || len(resend) > 0 || len(ts.rejected) > 0 ||
		ts.sent.len() > 0 || ts.building != nil || ts.fresh != nil || v.c == nil {
		return ts.diff(names, resend, cur, hidden)
	}
	f := v.wildcardFirst(s.resourcesKey(v, ts.typeURL))
	if len(f.resources) == 0 {
		return nil, nil
	}
	ts.sent.fill(f.resources)
	ts.digest = f.digest
	ts.fresh = f.resources
	return f.resources, nil
}

// resourcesKey returns the key of the resources the stream sees of
// typeURL in v's types (resources).
func (s *session) resourcesKey(v view, typeURL string) string {
	if s.variant != "" {
		if k := variantKey(typeURL, s.variant); v.types[k] != nil {
			return k
		}
	}
	return typeURL
}
