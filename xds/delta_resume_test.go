package xds

import (
	"maps"
	"slices"
	"sort"
	"testing"
	"unsafe"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// TestHoldInitialVersions: the versions a reconnecting Delta client names
// are held as the cache's own resources where current and visible, and
// stand-ins otherwise; the first flush's diff then sends the stale and
// removes the gone or hidden exactly as for stand-ins alone.
func TestHoldInitialVersions(t *testing.T) {
	c := newCache([]string{EndpointType}, nil)
	cur := map[string]*resource{}
	for _, n := range []string{"a", "b", "c"} {
		r, err := newResource(EndpointType, n, &endpointv3.ClusterLoadAssignment{ClusterName: n})
		if err != nil {
			t.Fatal(err)
		}
		cur[n] = r
		c.types[EndpointType][n] = r
	}
	hiddenFromX := VisibleToAllExcept("x")
	cur["b"].vis = &hiddenFromX

	for _, isolated := range []bool{false, true} {
		sess, ts := holdInitialAs(c, cur, isolated)
		checkHeldInitial(t, sess, ts, cur, isolated)
		checkFirstFlush(t, c, sess, ts, cur, isolated)
	}
}

// holdInitialAs has a wildcard delta session of namespace x (isolated or
// not) hold the initial versions a client names: a and b current (b
// hidden from x), c stale, d gone.
func holdInitialAs(c *cache, cur map[string]*resource, isolated bool) (*session, *typeState) {
	p := &protocol{typeURLs: []string{EndpointType}}
	if isolated {
		p.namespaceOf = NodeNamespace
	}
	sess := newSession(p, Delta)
	sess.ns, sess.nsOK = "x", true
	ts := sess.typeState(EndpointType)
	ts.wildcard = true
	// Names the client sends are its own strings, not the cache's.
	own := func(s string) string { return string([]byte(s)) }
	c.read(func(v view) {
		sess.holdInitial(ts, map[string]string{
			own("a"): cur["a"].version, // current
			own("b"): cur["b"].version, // current, hidden under isolation
			own("c"): "stale",
			own("d"): "gone",
		}, v)
	})
	return sess, ts
}

// checkHeldInitial: current visible names are held as the cache's own
// resources (under the cache's strings), the rest as stand-ins, and every
// name named is pending.
func checkHeldInitial(t *testing.T, sess *session, ts *typeState, cur map[string]*resource, isolated bool) {
	t.Helper()
	wantCache := []string{"a", "b"}
	if isolated {
		wantCache = []string{"a"}
	}
	var fromCache []string
	for name, r := range heldMap(ts.sent) {
		if r == cur[name] {
			fromCache = append(fromCache, name)
			if unsafe.StringData(name) != unsafe.StringData(cur[name].name) {
				t.Errorf("isolated=%v: %s held under the client's string, not the cache's", isolated, name)
			}
		} else if r.any != nil || r.pair != pairDigest(name, r.version) {
			t.Errorf("isolated=%v: %s held as %+v, want a stand-in", isolated, name, r)
		}
	}
	sort.Strings(fromCache)
	if !slices.Equal(fromCache, wantCache) {
		t.Errorf("isolated=%v: held as the cache's resources: %v, want %v", isolated, fromCache, wantCache)
	}
	if ts.sent.len() != 4 || ts.digest != recompute(heldMap(ts.sent)) {
		t.Fatalf("isolated=%v: sent %d names, digest %v, want 4 and %v", isolated, ts.sent.len(), ts.digest, recompute(heldMap(ts.sent)))
	}
	pending := slices.Sorted(maps.Keys(sess.pending[EndpointType]))
	if !slices.Equal(pending, []string{"a", "b", "c", "d"}) {
		t.Fatalf("isolated=%v: pending %v, want every name named", isolated, pending)
	}
}

// checkFirstFlush: the first flush sends only the stale c and removes the
// gone d (and, isolated, the hidden b), leaving every name held as the
// current resource.
func checkFirstFlush(t *testing.T, c *cache, sess *session, ts *typeState, cur map[string]*resource, isolated bool) {
	t.Helper()
	var hidden func(*resource) bool
	wantRemoved := []string{"d"}
	if isolated {
		hidden, wantRemoved = sess.hidden, []string{"b", "d"}
	}
	changed, removed := ts.diff(sess.pending[EndpointType], nil, c.types[EndpointType], hidden)
	if len(changed) != 1 || changed[0] != cur["c"] || !slices.Equal(removed, wantRemoved) {
		t.Fatalf("isolated=%v: first flush sends %v, removes %v; want [c], %v", isolated, changed, removed, wantRemoved)
	}
	for name, r := range heldMap(ts.sent) {
		if r != cur[name] {
			t.Fatalf("isolated=%v: after the flush %s is held as %+v, not the current resource", isolated, name, r)
		}
	}
}
