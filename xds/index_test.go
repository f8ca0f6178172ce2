package xds

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"

	"github.com/meshd/meshd/krt"
)

// indexRig is streams' sessions over one cache, with the index their
// steps feed, as the stream code feeds the server's.
type indexRig struct {
	t     *testing.T
	cache *cache
	subs  *subscribers[int]
	ss    []*session
	now   time.Time
}

func newIndexRig(t *testing.T, kinds ...StreamKind) *indexRig {
	types := []string{ClusterType, EndpointType}
	r := &indexRig{t: t, cache: newCache(types, nil), subs: newSubscribers[int](), now: time.Unix(0, 0)}
	for _, k := range kinds {
		r.ss = append(r.ss, newSession(&protocol{typeURLs: types}, k))
	}
	return r
}

// step applies a request (nil: a wake-up) to stream i and flushes it,
// then hands its interest to the index.
func (r *indexRig) step(i int, req any) []update {
	r.now = r.now.Add(time.Second)
	var out []update
	r.cache.read(func(v view) {
		var err error
		switch req := req.(type) {
		case *discovery.DeltaDiscoveryRequest:
			err = r.ss[i].delta(req, v, r.now)
		case *discovery.DiscoveryRequest:
			err = r.ss[i].sotw(req, v, r.now)
		}
		if err != nil {
			r.t.Fatalf("stream %d: %v", i, err)
		}
		out = r.ss[i].flush(v, r.now)
		r.subs.apply(i, r.ss[i].takeInterest())
	})
	return out
}

// set puts (or, with rev "", deletes) resources of typeURL and tells the
// streams the index routes the change to.
func (r *indexRig) set(typeURL, rev string, names ...string) {
	b := krt.Batch[entry]{}
	r.cache.read(func(v view) {
		for _, n := range names {
			old := v.resources(typeURL)[n]
			if rev == "" {
				if old != nil {
					b.Events = append(b.Events, krt.Event[entry]{Type: krt.EventDelete, Old: &entry{res: old}})
				}
				continue
			}
			res, err := newResource(typeURL, n, scriptMessage(typeURL, n, rev))
			if err != nil {
				r.t.Fatal(err)
			}
			b.Events = append(b.Events, krt.Event[entry]{Type: krt.EventAdd, New: &entry{res: res}})
		}
	})
	changed := map[string]map[string]struct{}{}
	for t, ns := range r.cache.apply(b) {
		changed[t] = map[string]struct{}{}
		for _, n := range ns {
			changed[t][n] = struct{}{}
		}
	}
	for i, routed := range r.subs.route(changed) {
		var woken bool
		r.cache.read(func(v view) { woken = r.ss[i].changed(routed, v) })
		if woken {
			r.step(i, nil)
		}
	}
}

// renderIndex shows the index: per type, the wildcard streams and each
// name's, each stream as name tells.
func renderIndex[K comparable](x *subscribers[K], name func(K) string) string {
	names := func(set map[K]struct{}) []string {
		out := make([]string, 0, len(set))
		for k := range set {
			out = append(out, name(k))
		}
		slices.Sort(out)
		return out
	}
	var b strings.Builder
	for _, t := range slices.Sorted(maps.Keys(x.types)) {
		ti := x.types[t]
		if len(ti.wildcard) == 0 && len(ti.byName) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: *=%v", shortType(t), names(ti.wildcard))
		for _, n := range slices.Sorted(maps.Keys(ti.byName)) {
			fmt.Fprintf(&b, " %s=%v", n, names(x.slotKeys(ti.byName[n])))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// slotKeys returns the streams of the slots in set.
func (x *subscribers[K]) slotKeys(set *slotSet) map[K]struct{} {
	out := map[K]struct{}{}
	set.each(func(slot int) { out[x.keys[slot]] = struct{}{} })
	return out
}

func renderIntIndex(x *subscribers[int]) string { return renderIndex(x, strconv.Itoa) }

// truth is the index the sessions' state calls for.
func (r *indexRig) truth() string {
	x := newSubscribers[int]()
	for i, s := range r.ss {
		x.apply(i, s.interestNow(true))
	}
	return renderIntIndex(x)
}

func delta(typeURL string, sub, unsub []string) *discovery.DeltaDiscoveryRequest {
	return &discovery.DeltaDiscoveryRequest{TypeUrl: typeURL, ResourceNamesSubscribe: sub, ResourceNamesUnsubscribe: unsub}
}

// TestIndexFollowsSubscriptions walks the index through subscribing,
// unsubscribing, a wildcard taken and left, and a stream closing.
func TestIndexFollowsSubscriptions(t *testing.T) {
	r := newIndexRig(t, Delta, Delta)
	r.set(EndpointType, "1", "a", "b", "c")
	steps := []struct {
		name   string
		stream int
		req    *discovery.DeltaDiscoveryRequest
		want   string
	}{
		{"subscribe", 0, delta(EndpointType, []string{"a", "b"}, nil), "eds: *=[] a=[0] b=[0]\n"},
		{"another stream", 1, delta(EndpointType, []string{"b", "x"}, nil), "eds: *=[] a=[0] b=[0 1] x=[1]\n"},
		{"unsubscribe", 0, delta(EndpointType, nil, []string{"a"}), "eds: *=[] b=[0 1] x=[1]\n"},
		{"wildcard", 1, delta(EndpointType, []string{"*"}, nil), "eds: *=[1] b=[0]\n"},
		{"leave the wildcard", 1, delta(EndpointType, nil, []string{"*"}), "eds: *=[] b=[0 1] x=[1]\n"},
		{"wildcard with no names", 0, delta(ClusterType, nil, nil), "cds: *=[0]\neds: *=[] b=[0 1] x=[1]\n"},
	}
	for _, s := range steps {
		r.step(s.stream, s.req)
		if got := renderIntIndex(r.subs); got != s.want {
			t.Fatalf("%s: index\n%s\nwant\n%s", s.name, got, s.want)
		}
	}
	r.subs.remove(1, r.ss[1])
	if got, want := renderIntIndex(r.subs), "cds: *=[0]\neds: *=[] b=[0]\n"; got != want {
		t.Fatalf("stream closed: index\n%s\nwant\n%s", got, want)
	}
	r.subs.remove(0, r.ss[0])
	if got := renderIntIndex(r.subs); got != "" {
		t.Fatalf("every stream closed: index\n%s\nwant it empty", got)
	}
}

// TestIndexReusesSlots closes a stream and opens another, which takes
// the closed one's slot: the new stream is routed its own names only,
// none of those the closed stream had.
func TestIndexReusesSlots(t *testing.T) {
	r := newIndexRig(t, Delta, Delta, Delta)
	r.set(EndpointType, "1", "a", "b", "c")
	r.step(0, delta(EndpointType, []string{"a", "b"}, nil))
	r.step(1, delta(EndpointType, []string{"b"}, nil))
	r.subs.remove(0, r.ss[0])
	r.step(2, delta(EndpointType, []string{"c"}, nil))
	if got, want := r.subs.slots[2], 0; got != want {
		t.Errorf("the new stream has slot %d, want the closed one's, %d", got, want)
	}
	if got, want := renderIntIndex(r.subs), "eds: *=[] b=[1] c=[2]\n"; got != want {
		t.Fatalf("index\n%s\nwant\n%s", got, want)
	}
	got := r.subs.route(map[string]map[string]struct{}{EndpointType: {"a": {}, "b": {}, "c": {}}})
	want := map[int][]string{1: {"b"}, 2: {"c"}}
	if len(got) != len(want) {
		t.Fatalf("routed to %v, want streams 1 and 2", got)
	}
	for k, names := range want {
		if w := slices.Sorted(maps.Keys(got[k][EndpointType])); !slices.Equal(w, names) {
			t.Errorf("stream %d routed %v, want %v", k, w, names)
		}
	}
}

// TestIndexRoutes checks what route returns: a wildcard stream gets the
// whole changed set of its type, a named one the names it is indexed by,
// and a stream concerned by none is left out.
func TestIndexRoutes(t *testing.T) {
	r := newIndexRig(t, Delta, Delta, Delta)
	r.set(EndpointType, "1", "a", "b")
	r.step(0, delta(EndpointType, []string{"*"}, nil))
	r.step(1, delta(EndpointType, []string{"a", "z"}, nil))
	r.step(2, delta(ClusterType, []string{"a"}, nil))
	changed := map[string]map[string]struct{}{EndpointType: {"a": {}, "b": {}}}
	got := r.subs.route(changed)
	if len(got) != 2 {
		t.Fatalf("routed to %d streams, want 2: %v", len(got), got)
	}
	if w := slices.Sorted(maps.Keys(got[0][EndpointType])); !slices.Equal(w, []string{"a", "b"}) {
		t.Errorf("wildcard stream routed %v, want [a b]", w)
	}
	if w := slices.Sorted(maps.Keys(got[1][EndpointType])); !slices.Equal(w, []string{"a"}) {
		t.Errorf("named stream routed %v, want [a]", w)
	}
	if n := r.subs.reaching(changed); n != 2 {
		t.Errorf("%d names reach a stream, want 2 (a wildcard takes every name)", n)
	}
}

// TestIndexReaching: names no stream subscribes to or holds are not
// counted as reaching one; a type without a wildcard counts only its
// indexed names.
func TestIndexReaching(t *testing.T) {
	r := newIndexRig(t, Delta, Delta)
	r.set(EndpointType, "1", "a", "b")
	r.step(0, delta(EndpointType, []string{"a", "z"}, nil))
	r.step(1, delta(ClusterType, []string{"*"}, nil))
	changed := map[string]map[string]struct{}{
		EndpointType: {"a": {}, "b": {}, "z": {}},
		ClusterType:  {"c1": {}, "c2": {}},
		ListenerType: {"l1": {}},
	}
	// a and z by name (z subscribed though absent), both clusters by the
	// wildcard; b and the listener reach no one.
	if n := r.subs.reaching(changed); n != 4 {
		t.Errorf("%d names reach a stream, want 4 (a, z, c1, c2)", n)
	}
}

// TestIndexModel drives random streams through random requests, answers
// and cache changes, and after every step compares the index with the one
// the sessions' state calls for: the streams' logs keep it exact.
func TestIndexModel(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	names := []string{"a", "b", "c", "d", "e"}
	pick := func() []string {
		var out []string
		for _, n := range names {
			if rng.Intn(3) == 0 {
				out = append(out, n)
			}
		}
		if rng.Intn(5) == 0 {
			out = append(out, "*")
		}
		return out
	}
	types := []string{ClusterType, EndpointType}
	for round := range 200 {
		r := newIndexRig(t, Delta, Delta, SotW, SotW)
		for step := range 40 {
			i, typeURL := rng.Intn(len(r.ss)), types[rng.Intn(2)]
			var what string
			switch op := rng.Intn(5); {
			case op == 0:
				rev := fmt.Sprint(rng.Intn(3))
				if rng.Intn(4) == 0 {
					rev = ""
				}
				what = "cache " + rev
				r.set(typeURL, rev, pick()...)
			case r.ss[i].kind == Delta:
				req := delta(typeURL, pick(), pick())
				r.answerLast(i, typeURL, req, rng.Intn(4) == 0)
				what = fmt.Sprintf("delta %v", req)
				r.step(i, req)
			default:
				req := &discovery.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: pick()}
				what = fmt.Sprintf("sotw %v", req)
				r.step(i, req)
			}
			if got, want := renderIntIndex(r.subs), r.truth(); got != want {
				t.Fatalf("round %d step %d (stream %d, %s): index\n%s\nwant\n%s", round, step, i, what, got, want)
			}
		}
		for i, s := range r.ss {
			r.subs.remove(i, s)
		}
		if got := renderIntIndex(r.subs); got != "" {
			t.Fatalf("round %d: every stream closed, index\n%s", round, got)
		}
	}
}

// answerLast makes req answer stream i's last response of typeURL: a
// NACK when nack is set, which puts back what the client held before.
func (r *indexRig) answerLast(i int, typeURL string, req *discovery.DeltaDiscoveryRequest, nack bool) {
	ts := r.ss[i].types[typeURL]
	if ts == nil || ts.nonce == "" {
		return
	}
	req.ResponseNonce = ts.nonce
	if nack {
		req.ErrorDetail = &status.Status{Code: 3, Message: "rejected"}
	}
}

// TestIndexRoutingReused: a routing reset after one round and filled by
// the next holds that round's names alone, in the maps of the first.
func TestIndexRoutingReused(t *testing.T) {
	r := newIndexRig(t, Delta, Delta)
	r.set(EndpointType, "1", "a", "b")
	r.step(0, delta(EndpointType, []string{"a", "b"}, nil))
	r.step(1, delta(EndpointType, []string{"b"}, nil))
	var routes routing[int]
	r.subs.routeInto(map[string]map[string]struct{}{EndpointType: {"a": {}, "b": {}}}, &routes)
	if routes.reached != 2 || len(routes.streams) != 2 {
		t.Fatalf("first round: %d names reached %d streams, want 2 and 2", routes.reached, len(routes.streams))
	}
	first := routes.streams[0]
	routes.reset()
	if len(first) != 0 || len(routes.spareTypes) != 2 || len(routes.spareSets) != 2 {
		t.Fatalf("reset kept %v, %d spare type maps and %d spare sets, want none kept and 2 and 2", first, len(routes.spareTypes), len(routes.spareSets))
	}
	r.subs.routeInto(map[string]map[string]struct{}{EndpointType: {"a": {}}}, &routes)
	if routes.reached != 1 || len(routes.streams) != 1 {
		t.Fatalf("second round: %d names reached %d streams, want 1 and 1", routes.reached, len(routes.streams))
	}
	if w := slices.Sorted(maps.Keys(routes.streams[0][EndpointType])); !slices.Equal(w, []string{"a"}) {
		t.Errorf("stream 0 routed %v in the second round, want [a]", w)
	}
}

// route returns what routeInto finds per stream, in maps of its own.
func (x *subscribers[K]) route(changed map[string]map[string]struct{}) map[K]map[string]map[string]struct{} {
	var r routing[K]
	x.routeInto(changed, &r)
	return r.streams
}

// reaching counts the names in changed (per type) that reach some
// stream: every name of a type a stream subscribes to by wildcard, the
// names indexed otherwise. Names no stream wants (a listener per pod,
// say, where no proxy asks for listeners) cost a round nothing, so they
// do not count as churn.
func (x *subscribers[K]) reaching(changed map[string]map[string]struct{}) int {
	var r routing[K]
	x.routeInto(changed, &r)
	return r.reached
}
