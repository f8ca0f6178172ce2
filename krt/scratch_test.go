package krt_test

import (
	"fmt"
	"testing"

	"github.com/meshd/meshd/krt"
)

// TestLargeRunKeepsScratch changes a singleton that every input of a
// collection reads, several times: from the second such change on, the
// collection keeps its dirty list, change queue and change log between
// transactions instead of making them anew, and one small change after
// the run drops them. The outputs are checked after every change.
func TestLargeRunKeepsScratch(t *testing.T) {
	const n = 1500 // above the change queue's 1024 as well
	g := krt.NewGraph()
	cfg := krt.NewStaticSingleton(g, &Num{N: 0})
	in := krt.NewStatic[Num](g)
	items := make([]Num, n)
	for i := range items {
		items[i] = Num{Key: fmt.Sprintf("in-%04d", i), N: i}
	}
	in.Set(items...)
	out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, v Num) *Num {
		c, _ := krt.FetchOne(ctx, cfg)
		return &Num{Key: v.Key, N: v.N + c.N}
	})
	check := func(step string, add int) {
		t.Helper()
		for _, i := range []int{0, n / 2, n - 1} {
			if v, ok := out.Get(items[i].Key); !ok || v.N != i+add {
				t.Fatalf("%s: %s reads %+v %v, want N=%d", step, items[i].Key, v, ok, i+add)
			}
		}
	}
	for round := 1; round <= 4; round++ {
		cfg.Set(Num{N: 1000 * round})
		check(fmt.Sprintf("change %d", round), 1000*round)
		dirty, unprop, changes := krt.ScratchCapacities[Num](out)
		kept := dirty >= n && unprop >= n && changes >= n
		if round > 1 && !kept {
			t.Fatalf("change %d of a run: capacities dirty %d, queue %d, log %d, want >= %d", round, dirty, unprop, changes, n)
		}
	}
	items[7].N = -7
	in.Set(items[7])
	if v, _ := out.Get(items[7].Key); v.N != -7+4000 {
		t.Fatalf("after a small change: %+v", v)
	}
	if dirty, unprop, changes := krt.ScratchCapacities[Num](out); dirty > 64 || unprop > 1024 || changes > 64 {
		t.Fatalf("after a small change: capacities dirty %d, queue %d, log %d", dirty, unprop, changes)
	}
}
