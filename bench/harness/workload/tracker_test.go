package workload

import (
	"slices"
	"testing"
	"time"
)

// event is an engine's event as the tests feed it: the new value, nil for
// a deletion.
type event[T any] struct{ new *T }

func newOf[T any](e event[T]) *T { return e.new }

func endpointsEvents(eps ...*Endpoints) []event[Endpoints] {
	out := make([]event[Endpoints], len(eps))
	for i, e := range eps {
		out[i] = event[Endpoints]{e}
	}
	return out
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestTracker(t *testing.T) {
	tr := NewTracker()
	if !isClosed(tr.Arm()) {
		t.Fatal("Arm with nothing pending returned an open channel")
	}
	armed := tr.SeenAt()
	if armed.IsZero() {
		t.Error("Arm with nothing pending left SeenAt zero")
	}
	tr.Expect("a", "")
	tr.Expect("b", "")
	tr.Expect("c", "b") // c supersedes b
	done := tr.Arm()
	Observe(tr, endpointsEvents(&Endpoints{Service: "s", IPs: []string{"a"}}, nil), newOf)
	if isClosed(done) || tr.Pending() != 1 || !tr.SeenAt().Equal(armed) {
		t.Fatalf("after a: closed %v, pending %d, seen at %v; want open, 1 (c), %v", isClosed(done), tr.Pending(), tr.SeenAt(), armed)
	}
	before := time.Now()
	Observe(tr, endpointsEvents(&Endpoints{Service: "s", IPs: []string{"c", "z"}}), newOf)
	if !isClosed(done) || tr.Pending() != 0 {
		t.Fatalf("after c: closed %v, pending %d; want closed, 0", isClosed(done), tr.Pending())
	}
	if at := tr.SeenAt(); at.Before(before) || at.After(time.Now()) {
		t.Errorf("SeenAt %v, want the time of the event that emptied pending (after %v)", at, before)
	}
	if tr.Batches() != 2 || tr.Events() != 3 {
		t.Errorf("counts %d batches, %d events; want 2, 3", tr.Batches(), tr.Events())
	}
	tr.ResetCounts()
	if tr.Batches() != 0 || tr.Events() != 0 {
		t.Errorf("after ResetCounts: %d batches, %d events", tr.Batches(), tr.Events())
	}
}

func TestTrackerArmedTwice(t *testing.T) {
	tr := NewTracker()
	tr.Expect("a", "")
	tr.Arm()
	defer func() {
		if recover() == nil {
			t.Error("a second Arm while the first waits did not panic")
		}
	}()
	tr.Arm()
}

func TestTrackerProbe(t *testing.T) {
	tr := NewTracker()
	Observe(tr, endpointsEvents(&Endpoints{Service: "s", IPs: []string{"0"}}), newOf)
	tr.WatchProbe("s")
	Observe(tr, endpointsEvents(
		&Endpoints{Service: "s", IPs: []string{"1"}},
		&Endpoints{Service: "other", IPs: []string{"x"}},
		&Endpoints{Service: "s", IPs: []string{"1", "2"}},
	), newOf)
	got := tr.EndProbe()
	want := [][]string{{"1"}, {"1", "2"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("EndProbe = %v, want %v", got, want)
	}
	Observe(tr, endpointsEvents(&Endpoints{Service: "s", IPs: []string{"3"}}), newOf)
	if got := tr.EndProbe(); got != nil {
		t.Errorf("after EndProbe the tracker still recorded %v", got)
	}
}

func TestCounter(t *testing.T) {
	var c Counter
	wl := func(domain string) event[Workload] { return event[Workload]{&Workload{TrustDomain: domain}} }
	Count(&c, []event[Workload]{wl("new")}, newOf) // unarmed: ignored
	done := c.Arm("new", 2)
	Count(&c, []event[Workload]{wl("old"), wl("new"), {}}, newOf)
	if isClosed(done) {
		t.Fatal("closed after one of two workloads")
	}
	Count(&c, []event[Workload]{wl("new")}, newOf)
	if !isClosed(done) {
		t.Fatal("still open after both workloads")
	}
	Count(&c, []event[Workload]{wl("new")}, newOf) // disarmed: no second close
}
