package xds

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// The first response of a wildcard subscription. A client that connects
// and asks for every Listener or Cluster holds nothing yet: it is sent
// every resource of the type but those served by name only, and so is
// every other wildcard client of the same variant that connects while
// the cache holds the same resources. So that response's resources,
// sorted by name, and their digest are built once per cache generation
// and type (view.wildcardFirst) and shared: a stream copies the sorted
// slice into what it holds, rather than looking up, sorting and holding
// the names one by one. Its encoding, but for the nonce, is the same for
// each of them too (the version is the digest of what they hold): it is
// encoded once per protocol, and every stream sends those bytes, shared,
// followed by its nonce.

// wildcardFirst is the first response of a wildcard subscription to one
// type at one cache generation.
type wildcardFirst struct {
	gen uint64
	// resources are ordered by name; read only.
	resources []*resource
	// digest is that of every (name, version) pair of resources.
	digest digest

	// once encodes head, per StreamKind: the response without its nonce.
	once [2]sync.Once
	head [2][]byte
	err  [2]error
}

// encode returns the wire encoding of u, a response carrying f to a
// stream of kind: f's head, shared, and u's nonce, which both protocols
// encode last when nothing is removed.
func (f *wildcardFirst) encode(kind StreamKind, u *update) (mem.BufferSlice, error) {
	k := 0
	if kind == Delta {
		k = 1
	}
	f.once[k].Do(func() {
		head := *u
		head.nonce, head.first = "", nil
		bufs, err := (&outgoing{kind: kind, u: &head}).encode()
		if err != nil {
			f.err[k] = err
			return
		}
		f.head[k] = bufs.Materialize()
		bufs.Free()
	})
	if f.err[k] != nil {
		return nil, fmt.Errorf("xds: shared first response: %w", f.err[k])
	}
	nonce := protowire.AppendTag(nil, sotwNonceField, protowire.BytesType) // deltaNonceField alike
	nonce = protowire.AppendString(nonce, u.nonce)
	return mem.BufferSlice{mem.SliceBuffer(f.head[k]), mem.SliceBuffer(nonce)}, nil
}

// takeFirst returns the shared first response the last diff of ts took
// its resources from, if any, and forgets it.
func (ts *typeState) takeFirst() *wildcardFirst {
	f := ts.first
	ts.first = nil
	return f
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

// minSharedHeld is the fewest resources held after a first response
// built name by name that a stream tries to share with others
// (view.shareHeld): fewer cost little apart, and the lock more.
const minSharedHeld = 64

// diff brings ts up to date for names against the current resources cur
// (ts.diff), taking a wildcard subscription's first response from the
// shared one where it can: the client holds nothing and was sent nothing
// unanswered of the type, names no resource of it explicitly, and nothing
// is hidden from it or to be sent again.
func (s *session) diff(ts *typeState, v view, names, resend map[string]struct{}, cur map[string]*resource, hidden func(*resource) bool) (changed []*resource, removed []string) {
	if !ts.wildcard || ts.names.len() > 0 || hidden != nil || len(resend) > 0 || len(ts.rejected) > 0 ||
		ts.sent.len() > 0 || ts.building != nil || ts.fresh != nil || v.c == nil {
		first := ts.sent.len() == 0 && ts.building == nil && ts.fresh == nil
		changed, removed = ts.diff(names, resend, cur, hidden)
		if first && v.c != nil && ts.sent.len() >= minSharedHeld {
			ts.sent.share(func(held []*resource) []*resource {
				return v.shareHeld(s.resourcesKey(v, ts.typeURL), held)
			})
		}
		return changed, removed
	}
	f := v.wildcardFirst(s.resourcesKey(v, ts.typeURL))
	if len(f.resources) == 0 {
		return nil, nil
	}
	ts.sent.fill(f.resources)
	ts.digest = f.digest
	ts.fresh, ts.first = f.resources, f
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
