package xds

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/anypb"
)

// firstCache returns a cache of n Clusters, every seventh served by name
// only, whose names are not in order.
func firstCache(n int) *cache {
	c := newCache([]string{ClusterType}, nil)
	for i := range n {
		name := fmt.Sprintf("c%d", (i*7919)%n)
		r := &resource{typeURL: ClusterType, name: name, version: "v1", namedOnly: i%7 == 0}
		r.pair = pairDigest(r.name, r.version)
		c.types[ClusterType][name] = r
	}
	return c
}

// firstWildcard returns a session's wildcard Cluster subscription.
func firstWildcard(s *session) *typeState {
	ts := s.typeState(ClusterType)
	ts.subscribe(nil, nil, true)
	return ts
}

func resourceNames(rs []*resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}

// TestWildcardFirstAsDiff: the shared first response of a wildcard
// subscription leaves a stream as the name-by-name diff does (what it
// holds, its digest, what it sends, and what a NACK puts back), and
// streams reading one cache generation share one build of it.
func TestWildcardFirstAsDiff(t *testing.T) {
	c := firstCache(500)
	p := &protocol{typeURLs: []string{ClusterType}}
	shared, other, plain := newSession(p, SotW), newSession(p, SotW), newTypeState(ClusterType)
	plain.subscribe(nil, nil, true)
	var got, again, want []*resource
	c.read(func(v view) {
		all := map[string]struct{}{}
		for n := range v.resources(ClusterType) {
			all[n] = struct{}{}
		}
		got, _ = shared.diff(firstWildcard(shared), v, all, nil, v.resources(ClusterType), nil)
		again, _ = other.diff(firstWildcard(other), v, all, nil, v.resources(ClusterType), nil)
		want, _ = plain.diff(all, nil, v.resources(ClusterType), nil)
	})
	ts := shared.types[ClusterType]
	if g, w := resourceNames(got), resourceNames(want); !slices.Equal(g, w) || len(w) == 0 {
		t.Fatalf("sent %d names %v…, want %d %v…", len(g), g[:min(3, len(g))], len(w), w[:min(3, len(w))])
	}
	if ts.digest != plain.digest || !slices.Equal(resourceNames(ts.sent.all()), resourceNames(plain.sent.all())) {
		t.Fatalf("holds %d (digest %v), want %d (digest %v)", ts.sent.len(), ts.digest, plain.sent.len(), plain.digest)
	}
	if &got[0] != &again[0] {
		t.Error("two streams of one generation built the first response twice")
	}
	for _, s := range []*typeState{ts, plain} {
		s.sentResponse("1", time.Now())
		s.answer("", "1", &Nack{Message: "bad"}, time.Now())
	}
	if ts.sent.len() != 0 || ts.digest != (digest{}) || !maps.Equal(ts.rejected, plain.rejected) || len(ts.rejected) != len(want) {
		t.Fatalf("after a NACK: holds %d, digest %v, rejected %d; want 0, zero, %d", ts.sent.len(), ts.digest, len(ts.rejected), len(plain.rejected))
	}
}

// TestWildcardFirstPerGeneration: a batch applied makes the next first
// response anew, from the resources as they are then.
func TestWildcardFirstPerGeneration(t *testing.T) {
	c := firstCache(20)
	var before, after *wildcardFirst
	c.read(func(v view) { before = v.wildcardFirst(ClusterType) })
	c.mu.Lock()
	delete(c.types[ClusterType], before.resources[0].name)
	c.gen++ // as apply does
	c.mu.Unlock()
	c.read(func(v view) { after = v.wildcardFirst(ClusterType) })
	if len(after.resources) != len(before.resources)-1 || after.resources[0] == before.resources[0] {
		t.Fatalf("after a batch: %d resources from %s, want %d without %s",
			len(after.resources), after.resources[0].name, len(before.resources)-1, before.resources[0].name)
	}
}

// TestFreshFold: responses folded into one when the client answers none
// keep what a NACK puts back, also for a first response kept as fresh.
func TestFreshFold(t *testing.T) {
	c := firstCache(30)
	s := newSession(&protocol{typeURLs: []string{ClusterType}}, SotW)
	ts := firstWildcard(s)
	c.read(func(v view) {
		all := map[string]struct{}{}
		for n := range v.resources(ClusterType) {
			all[n] = struct{}{}
		}
		s.diff(ts, v, all, nil, v.resources(ClusterType), nil)
	})
	held := ts.sent.len()
	ts.sentResponse("0", time.Now())
	for i := 1; i <= maxPending; i++ { // empty responses, folding the first
		ts.sentResponse(fmt.Sprint(i), time.Now())
	}
	if ts.pending[0].fresh != nil || len(ts.pending[0].prev) != held {
		t.Fatalf("folded first response: fresh %d, prev %d; want nil, %d", len(ts.pending[0].fresh), len(ts.pending[0].prev), held)
	}
	ts.answer("", "1", &Nack{Message: "bad"}, time.Now())
	if ts.sent.len() != 0 {
		t.Fatalf("a NACK of the folded response leaves %d held, want 0", ts.sent.len())
	}
}

// TestWildcardFirstEncoding: a stream sending the shared first response
// sends the bytes encoding its own response gives, nonce included, and
// shares the head with the other streams.
func TestWildcardFirstEncoding(t *testing.T) {
	c := firstCache(50)
	for name, r := range c.types[ClusterType] {
		r.any = &anypb.Any{TypeUrl: ClusterType, Value: []byte("value of " + name)}
	}
	p := &protocol{typeURLs: []string{ClusterType}}
	for _, kind := range []StreamKind{SotW, Delta} {
		var heads [][]byte
		for i := range 2 {
			s := newSession(p, kind)
			var us []update
			c.read(func(v view) {
				s.subscribe(s.typeState(ClusterType), v, nil, nil, true)
				us = s.flush(v, time.Now())
			})
			if len(us) != 1 || us[0].first == nil {
				t.Fatalf("%s stream %d: %d responses, want one from the shared first response", kind, i, len(us))
			}
			u := us[0]
			got, err := (&outgoing{kind: kind, u: &u}).encode()
			if err != nil {
				t.Fatal(err)
			}
			u.first = nil
			want, err := (&outgoing{kind: kind, u: &u}).encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Materialize(), want.Materialize()) {
				t.Fatalf("%s stream %d: shared encoding differs from the stream's own", kind, i)
			}
			heads = append(heads, got[0].ReadOnlyData())
			got.Free()
			want.Free()
		}
		if &heads[0][0] != &heads[1][0] {
			t.Errorf("%s: two streams encoded the shared first response twice", kind)
		}
	}
}
