package xds

import (
	"maps"
	"math/rand"
	"slices"
	"testing"
)

// TestChangedMarksWhatTheStreamWants checks session.changed against its
// definition on random states: a changed name becomes pending exactly when
// the stream subscribes to it (by name, or wildcard unless its resource is
// served by name only) or holds it, whichever side changed walks.
func TestChangedMarksWhatTheStreamWants(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	pick := func() map[string]struct{} {
		out := map[string]struct{}{}
		for _, n := range names {
			if rng.Intn(3) == 0 {
				out[n] = struct{}{}
			}
		}
		return out
	}
	for i := range 2000 {
		s := newSession(&protocol{}, SotW)
		ts := s.typeState(EndpointType)
		ts.wildcard = rng.Intn(4) == 0
		for n := range pick() {
			ts.names.put(n)
		}
		for n := range pick() {
			ts.sent.put(&resource{name: n})
		}
		cur := map[string]*resource{}
		for n := range pick() {
			cur[n] = &resource{name: n, namedOnly: rng.Intn(2) == 0}
		}
		changed := pick()
		var want []string
		for n := range changed {
			held := ts.sent.has(n)
			wild := ts.wildcard && (cur[n] == nil || !cur[n].namedOnly)
			if wild || ts.names.has(n) || held {
				want = append(want, n)
			}
		}
		slices.Sort(want)
		v := view{types: map[string]map[string]*resource{EndpointType: cur}}
		woken := s.changed(map[string]map[string]struct{}{EndpointType: changed, ClusterType: {"a": {}}}, v)
		got := slices.Sorted(maps.Keys(s.pending[EndpointType]))
		if !slices.Equal(got, want) || woken != (len(want) > 0) {
			t.Fatalf("case %d: wildcard %v, names %v, held %v, changed %v: pending %v (woken %v), want %v",
				i, ts.wildcard, ts.names.all(), ts.sent.names(), changed, got, woken, want)
		}
		if _, ok := s.pending[ClusterType]; ok {
			t.Fatalf("case %d: a type the stream does not ask for became pending", i)
		}
	}
}
