package krt_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshd/meshd/krt"
)

// TestSlotReusedInOneTransaction: a transaction that removes a key, lets
// a new key take its freed slot and then adds the first key again (in
// another slot) gives each key its own net event, and a derived
// collection and an inline handler see the values the transaction ended
// with. The changes' log keeps where each key's value is now, not the
// value, so this is where a stale slot would show.
func TestSlotReusedInOneTransaction(t *testing.T) {
	g, in := newStatic[Num]()
	in.Set(Num{"a", 1}, Num{"keep", 5})
	doubled := krt.NewCollection(g, in, func(_ krt.HandlerContext, n Num) *Num {
		return &Num{n.Key, 2 * n.N}
	})
	var events []string
	reg := in.Register(func(b krt.Batch[Num]) {
		for _, e := range b.Events {
			events = append(events, describeEvent(e))
		}
	}, krt.Inline())
	defer reg.Unregister()
	defer runGraph(t, g)()
	waitRunning(t, reg, in)
	events = nil

	g.Update(func(tx *krt.Txn) {
		w := in.In(tx)
		w.Set(Num{"a", 2})
		w.Delete("a")
		w.Set(Num{"b", 3}) // takes the slot "a" freed
		w.Set(Num{"a", 4})
	})
	want := []string{"update a 1->4", "add b 3"}
	if !slices.Equal(events, want) {
		t.Fatalf("events %q, want %q", events, want)
	}
	for key, n := range map[string]int{"a": 8, "b": 6, "keep": 10} {
		wantN(t, doubled, key, n, "doubled from the transaction's last values")
	}
}

func describeEvent(e krt.Event[Num]) string {
	switch {
	case e.Old != nil && e.New != nil:
		return fmt.Sprintf("%s %s %d->%d", e.Type, e.Key, e.Old.N, e.New.N)
	case e.New != nil:
		return fmt.Sprintf("%s %s %d", e.Type, e.Key, e.New.N)
	default:
		return fmt.Sprintf("%s %s %d", e.Type, e.Key, e.Old.N)
	}
}
