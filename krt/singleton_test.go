package krt_test

import (
	"testing"

	"github.com/meshd/meshd/krt"
)

// A StaticSingleton is read like any singleton.
var _ krt.Singleton[Num] = krt.StaticSingleton[Num]{}

func TestStaticSingletonInTransaction(t *testing.T) {
	g := krt.NewGraph()
	cfg := krt.NewStaticSingleton(g, &Num{Key: "ignored", N: 1})
	if v, ok := cfg.Get(krt.SingletonKey); !ok || v.N != 1 {
		t.Fatalf("initial value under SingletonKey = %v %v, want N=1", v, ok)
	}
	others := krt.NewStatic[Num](g)
	v0 := g.Version()
	v := g.Update(func(tx *krt.Txn) {
		w := cfg.In(tx)
		w.Set(Num{N: 2})
		if got, ok := w.Value(); !ok || got.N != 2 {
			t.Errorf("value inside the transaction = %v %v, want N=2", got, ok)
		}
		others.In(tx).Set(Num{"x", 9})
	})
	if v != v0+1 {
		t.Fatalf("version %d after one transaction from %d", v, v0)
	}
	if got, _ := cfg.Value(); got.N != 2 {
		t.Fatalf("value after commit = %v", got)
	}
	g.Update(func(tx *krt.Txn) { cfg.In(tx).Clear() })
	if _, ok := cfg.Value(); ok || cfg.Len() != 0 {
		t.Fatalf("cleared singleton holds %v", cfg.List())
	}
	if v := cfg.Clear(); v != g.Version() {
		t.Fatalf("clearing an empty singleton returned %d, graph at %d", v, g.Version())
	}
}

func TestStaticSingletonRollsBack(t *testing.T) {
	g := krt.NewGraph()
	cfg := krt.NewStaticSingleton(g, &Num{N: 1})
	func() {
		defer func() { _ = recover() }()
		g.Update(func(tx *krt.Txn) {
			cfg.In(tx).Set(Num{N: 2})
			panic("abort")
		})
	}()
	if got, _ := cfg.Value(); got.N != 1 {
		t.Fatalf("value after a rolled-back Set = %v, want N=1", got)
	}
}

func TestStaticSingletonUnsynced(t *testing.T) {
	g := krt.NewGraph()
	cfg := krt.NewStaticSingleton[Num](g, nil, krt.WithUnsynced())
	double := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
		n, ok := krt.FetchOne(ctx, cfg)
		if !ok {
			return nil
		}
		return &Num{N: 2 * n.N}
	})
	cfg.Set(Num{N: 4})
	if cfg.HasSynced() || double.HasSynced() {
		t.Fatal("synced before MarkSynced")
	}
	cfg.MarkSynced()
	if !cfg.HasSynced() || !double.HasSynced() {
		t.Fatal("not synced after MarkSynced")
	}
	if got, _ := double.Value(); got.N != 8 {
		t.Fatalf("derived value = %v, want N=8", got)
	}
}

// TestSingletonReadByTwoCollections derives two collections from one
// input, each reading a singleton without a filter, and checks that a
// change of the singleton recomputes the inputs of both: each
// collection's reads name their own collection, though their filters
// are alike.
func TestSingletonReadByTwoCollections(t *testing.T) {
	g := krt.NewGraph()
	cfg := krt.NewStaticSingleton(g, &Num{N: 1})
	in := krt.NewStatic[Num](g)
	in.Set(Num{"a", 10}, Num{"b", 20})
	derive := func(mul int) krt.Collection[Num] {
		return krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
			c, _ := krt.FetchOne(ctx, cfg)
			return &Num{n.Key, n.N * c.N * mul}
		})
	}
	once, twice := derive(1), derive(2)
	cfg.Set(Num{N: 3})
	for _, tc := range []struct {
		c    krt.Collection[Num]
		want int
	}{{once, 30}, {twice, 60}} {
		if got, ok := tc.c.Get("a"); !ok || got.N != tc.want {
			t.Errorf("after the singleton changed: a = %v %v, want N=%d", got, ok, tc.want)
		}
	}
}
