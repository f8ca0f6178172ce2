package xds

import (
	"fmt"
	"slices"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// TestAnswerPerResponse: with two responses in flight, an ACK of the first
// and a NACK of the second leave the server believing the client holds the
// first's value — not the value from before both.
func TestAnswerPerResponse(t *testing.T) {
	res := func(v string) *resource { return &resource{name: "a", version: v} }
	ts := newTypeState(EndpointType)
	ts.names.put("a")
	names := map[string]struct{}{"a": {}}
	step := func(v, nonce string) {
		if changed, _ := ts.diff(names, nil, map[string]*resource{"a": res(v)}, nil); len(changed) != 1 {
			t.Fatalf("version %s not sent", v)
		}
		ts.nonce = nonce
		ts.sentResponse(nonce, time.Now())
	}
	step("v1", "1")
	if !ts.answer("", "1", nil, time.Now()) {
		t.Fatal("ACK of 1 not counted")
	}
	step("v2", "2")
	step("v3", "3")
	if !ts.answer("", "2", nil, time.Now()) { // the older response, ACKed late
		t.Fatal("ACK of 2 not counted")
	}
	if !ts.answer("", "3", &Nack{Message: "bad"}, time.Now()) {
		t.Fatal("NACK of 3 not counted")
	}
	if got := heldMap(ts.sent)["a"].version; got != "v2" {
		t.Fatalf("server thinks the client holds %s, want v2", got)
	}
	// v1 is a change from what the client holds (v2), so it is sent.
	if changed, _ := ts.diff(names, nil, map[string]*resource{"a": res("v1")}, nil); len(changed) != 1 {
		t.Fatal("going back to v1 was not sent")
	}
	// A repeated answer to an answered response is ignored.
	if ts.answer("", "3", &Nack{Message: "bad"}, time.Now()) || ts.nacks != 1 {
		t.Fatalf("repeated NACK counted: nacks=%d", ts.nacks)
	}
}

// TestSubscribeKeepsSortedList: a first subscription to a sorted list
// keeps that list rather than a copy, logs every name's interest as the
// name by name path does, and copies it before a later change.
func TestSubscribeKeepsSortedList(t *testing.T) {
	list := []string{"a", "b", "c"}
	ts := newTypeState(EndpointType)
	ts.hold(&resource{name: "b"}) // held: of interest already
	ts.interest = nil
	names, all := ts.subscribe(list, nil, false)
	if all || !slices.Equal(names, list) {
		t.Fatalf("subscribe returned %v %v, want %v false", names, all, list)
	}
	if &ts.names.all()[0] != &list[0] {
		t.Fatal("the subscription copied the sorted list")
	}
	want := []interestOp{{name: "a", on: true}, {name: "c", on: true}}
	if !slices.Equal(ts.interest, want) {
		t.Fatalf("interest %v, want %v", ts.interest, want)
	}
	ts.subscribe([]string{"d"}, []string{"c"}, false)
	if got := ts.names.all(); !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Fatalf("names %v after a change, want [a b d]", got)
	}
	if !slices.Equal(list, []string{"a", "b", "c"}) {
		t.Fatalf("the change reached the shared list: %v", list)
	}
}

// TestSubscribeUnsortedCopies: a list out of order, or naming a name
// twice, is sorted into a copy, once each.
func TestSubscribeUnsortedCopies(t *testing.T) {
	for _, list := range [][]string{{"c", "a", "b"}, {"a", "a", "b"}} {
		orig := slices.Clone(list)
		ts := newTypeState(EndpointType)
		ts.subscribe(list, nil, false)
		want := slices.Compact(slices.Sorted(slices.Values(orig)))
		if got := ts.names.all(); !slices.Equal(got, want) {
			t.Errorf("subscribe(%v): names %v, want %v", orig, got, want)
		}
		if !slices.Equal(list, orig) {
			t.Errorf("subscribe(%v) changed the list: %v", orig, list)
		}
	}
}

// TestShareHeld: two streams holding the same resources share the first
// one's list; a third holding others keeps its own, and is the one shared
// next.
func TestShareHeld(t *testing.T) {
	v := view{c: newCache([]string{EndpointType}, nil)}
	a, b := &resource{name: "a"}, &resource{name: "b"}
	first := []*resource{a, b}
	if got := v.shareHeld(EndpointType, first); &got[0] != &first[0] {
		t.Fatal("the first list was not kept")
	}
	if got := v.shareHeld(EndpointType, []*resource{a, b}); &got[0] != &first[0] {
		t.Fatal("an equal list was not given the first")
	}
	other := []*resource{a, {name: "b", version: "2"}}
	if got := v.shareHeld(EndpointType, other); &got[0] != &other[0] {
		t.Fatal("a list of other resources was given the first")
	}
	if got := v.shareHeld(EndpointType, slices.Clone(other)); &got[0] != &other[0] {
		t.Fatal("the last list kept is not the one shared")
	}
}

// TestDeltaSubscribeSharesNames: Delta streams subscribing to the same
// names, each request decoded afresh, keep one list (the cache's); a
// later subscribe or unsubscribe copies it for that stream alone, and a
// stream asking for other names keeps its own.
func TestDeltaSubscribeSharesNames(t *testing.T) {
	c := newCache([]string{EndpointType}, nil)
	p := &protocol{typeURLs: []string{EndpointType}}
	names := make([]string, minSharedHeld)
	for i := range names {
		names[i] = fmt.Sprintf("ep-%03d", i)
	}
	subscribe := func(s *session, add, remove []string) []string {
		t.Helper()
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: EndpointType,
			ResourceNamesSubscribe: add, ResourceNamesUnsubscribe: remove}
		c.read(func(v view) {
			if err := s.delta(req, v, time.Now()); err != nil {
				t.Fatalf("delta: %v", err)
			}
		})
		return s.types[EndpointType].names.all()
	}
	a, b, other := newSession(p, Delta), newSession(p, Delta), newSession(p, Delta)
	got := subscribe(a, slices.Clone(names), nil)
	if g := subscribe(b, slices.Clone(names), nil); &g[0] != &got[0] {
		t.Fatal("two streams subscribing to the same names keep two lists")
	}
	if g := subscribe(other, slices.Clone(names[1:]), nil); &g[0] == &got[0] {
		t.Fatal("a stream subscribing to other names was given the first list")
	}
	changed := subscribe(a, []string{"ep-999"}, []string{names[0]})
	want := append(slices.Clone(names[1:]), "ep-999")
	if !slices.Equal(changed, want) {
		t.Fatalf("names after a change %v, want %v", changed, want)
	}
	if g := b.types[EndpointType].names.all(); &g[0] != &got[0] || !slices.Equal(g, names) {
		t.Fatalf("the change reached the other stream's shared list: %v", g)
	}
	if g := subscribe(b, nil, []string{names[len(names)-1]}); !slices.Equal(g, names[:len(names)-1]) ||
		!slices.Equal(got, names) {
		t.Fatalf("after an unsubscribe: names %v, shared list %v", g, got)
	}
}
