package krt_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/meshd/meshd/krt"
)

// nums returns n items keyed k000, k001, ... with N their number.
func nums(n int) []Num {
	out := make([]Num, n)
	for i := range out {
		out[i] = Num{fmt.Sprintf("k%03d", i), i}
	}
	return out
}

// TestLoadKeepsNoChangeLog checks that a bulk Set into an empty static
// collection logs no change, while a Set into a filled one logs each.
func TestLoadKeepsNoChangeLog(t *testing.T) {
	g, in := newStatic[Num]()
	items := nums(100)
	g.Update(func(tx *krt.Txn) {
		in.In(tx).Set(items...)
		if n := krt.ChangesLogged[Num](in); n != 0 {
			t.Errorf("a load into an empty collection logged %d changes, want 0", n)
		}
	})
	g.Update(func(tx *krt.Txn) {
		in.In(tx).Set(Num{"k000", -1}, Num{"new", 1})
		if n := krt.ChangesLogged[Num](in); n != 2 {
			t.Errorf("a Set into a filled collection logged %d changes, want 2", n)
		}
	})
	if in.Len() != 101 {
		t.Errorf("Len = %d, want 101", in.Len())
	}
}

// TestLoadIsEmptyToOlderReaders reads a collection while a load fills it
// and through a snapshot taken before it, during and after its commit:
// every read at the older version sees the collection as it was.
func TestLoadIsEmptyToOlderReaders(t *testing.T) {
	for _, before := range [][]Num{nil, {{"old", 1}}} {
		g, in := newStatic[Num]()
		byN := krt.NewIndex(in, "by-n", func(n Num) []string { return []string{fmt.Sprint(n.N % 2)} })
		if len(before) > 0 { // filled, then emptied: a load follows a delete
			in.Set(before...)
		}
		g.Read(func(s *krt.Snapshot) {
			if len(before) > 0 {
				runAside(func() { in.Delete("old") })
			}
			runAside(func() {
				g.Update(func(tx *krt.Txn) {
					in.In(tx).Set(nums(100)...)
					in.In(tx).Delete("k001")
					runAside(func() { checkReads(t, in, byN, nil, "during the load") })
				})
			})
			checkReads(t, in.At(s), byN, before, "through a snapshot from before the load")
		})
		want := slices.Delete(nums(100), 1, 2)
		checkReads(t, in, byN, want, "after the load")
	}
}

// reader is what a collection and a View of it share.
type reader interface {
	Get(string) (Num, bool)
	List() []Num
	Len() int
}

func checkReads(t *testing.T, r reader, byN krt.Index[Num], want []Num, when string) {
	t.Helper()
	if got := r.List(); !slices.Equal(got, want) {
		t.Errorf("List %s = %d items, want %d", when, len(got), len(want))
	}
	if got := r.Len(); got != len(want) {
		t.Errorf("Len %s = %d, want %d", when, got, len(want))
	}
	if _, ok := r.Get("k000"); ok != slices.ContainsFunc(want, func(n Num) bool { return n.Key == "k000" }) {
		t.Errorf("Get(k000) %s found %v", when, ok)
	}
	if v, ok := r.(krt.View[Num]); ok {
		if got := v.Lookup(byN, "0"); len(got) != evens(want) {
			t.Errorf("Lookup %s = %d items, want %d", when, len(got), evens(want))
		}
	} else if got := byN.Lookup("0"); len(got) != evens(want) {
		t.Errorf("Lookup %s = %d items, want %d", when, len(got), evens(want))
	}
}

func evens(ns []Num) int {
	n := 0
	for _, x := range ns {
		if x.N%2 == 0 {
			n++
		}
	}
	return n
}

// runAside runs fn on another goroutine and waits for it, as a reader or
// writer beside the one running the test.
func runAside(fn func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fn() }()
	wg.Wait()
}

// TestLoadEventsAndDownstream checks a load's batch (an add per item, in
// key order) and that a collection derived from it gets every item.
func TestLoadEventsAndDownstream(t *testing.T) {
	g, in := newStatic[Num]()
	double := krt.NewCollection(g, in, func(_ krt.HandlerContext, n Num) *Num {
		return &Num{n.Key, 2 * n.N}
	})
	var batches []krt.Batch[Num]
	reg := in.Register(func(b krt.Batch[Num]) { batches = append(batches, b) })
	defer reg.Unregister()
	stop := runGraph(t, g)
	items := nums(100)
	shuffled := slices.Clone(items)
	slices.Reverse(shuffled)
	v := in.Set(shuffled...)
	if err := reg.WaitVersion(t.Context(), v); err != nil {
		t.Fatal(err)
	}
	stop()
	if len(batches) != 1 || len(batches[0].Events) != len(items) {
		t.Fatalf("batches = %d, want one of %d events", len(batches), len(items))
	}
	for i, ev := range batches[0].Events {
		if ev.Type != krt.EventAdd || ev.Key != items[i].Key || ev.Old != nil || *ev.New != items[i] {
			t.Fatalf("event %d = %v %q, want an add of %v", i, ev.Type, ev.Key, items[i])
		}
	}
	if got, _ := double.Get("k042"); got.N != 84 || double.Len() != 100 {
		t.Errorf("derived: Get(k042) = %v, Len %d", got, double.Len())
	}
}

// TestLoadRolledBack checks that a load whose transaction panics leaves
// the collection and its index empty, and that a load after it works.
func TestLoadRolledBack(t *testing.T) {
	g, in := newStatic[Num]()
	byN := krt.NewIndex(in, "by-n", func(n Num) []string { return []string{fmt.Sprint(n.N % 2)} })
	panicOf(func() {
		g.Update(func(tx *krt.Txn) {
			in.In(tx).Set(nums(100)...)
			panic("undo")
		})
	})
	if in.Len() != 0 || len(byN.Lookup("0")) != 0 || len(byN.Keys()) != 0 {
		t.Fatalf("after a rolled-back load: Len %d, Lookup %d, Keys %d", in.Len(), len(byN.Lookup("0")), len(byN.Keys()))
	}
	in.Set(nums(100)...)
	checkReads(t, in, byN, nums(100), "after a second load")
}
