package krt_test

import (
	"sync/atomic"
	"testing"

	"github.com/meshd/meshd/krt"
)

func TestTriggerRecomputesOnlyItsDependents(t *testing.T) {
	g, in := newStatic[Num]()
	var outside atomic.Int64 // state krt cannot see
	trig := krt.NewTrigger(g, krt.WithName("flag"), krt.WithUnsynced())
	outside.Store(2)
	in.Set(Num{"a", 1}, Num{"fixed", 1}) // before scaled, which syncs once its first inputs have
	scaled := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.Key == "fixed" {
			return &n // does not depend on the trigger
		}
		trig.Depend(ctx)
		return &Num{Key: n.Key, N: n.N * int(outside.Load())}
	}, krt.WithName("scaled"))
	if scaled.HasSynced() {
		t.Fatal("synced before the trigger's state loaded")
	}
	trig.MarkSynced()
	if !scaled.HasSynced() {
		t.Fatal("not synced after the trigger synced")
	}
	outside.Store(3)
	before := info(t, g, "scaled").Recomputes
	v := trig.Fire()
	if got := info(t, g, "scaled").Recomputes - before; got != 1 {
		t.Fatalf("Fire recomputed %d inputs, want the one dependent", got)
	}
	if a, _ := scaled.Get("a"); a.N != 3 || v != g.Version() {
		t.Fatalf("a = %v at version %d (graph %d)", a, v, g.Version())
	}
	// Fired with other writes, in one transaction.
	outside.Store(5)
	g.Update(func(tx *krt.Txn) {
		in.In(tx).Set(Num{"b", 1})
		trig.FireIn(tx)
	})
	if a, _ := scaled.Get("a"); a.N != 5 {
		t.Fatalf("a = %v after FireIn", a)
	}
	if ci := info(t, g, "flag"); ci.Kind != "trigger" {
		t.Fatalf("trigger described as %+v", ci)
	}
}
