package krt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/meshd/meshd/krt"
)

type Num struct {
	Key string
	N   int
}

func (n Num) ResourceName() string { return n.Key }

// wantN fails t unless out holds key with N want; why says what the test
// expects there.
func wantN(t *testing.T, out krt.Collection[Num], key string, want int, why string) {
	t.Helper()
	if got, _ := out.Get(key); got.N != want {
		t.Fatalf("%s = %+v, want N %d: %s", key, got, want, why)
	}
}

func info(t *testing.T, g *krt.Graph, name string) krt.CollectionInfo {
	t.Helper()
	for _, c := range g.Describe().Collections {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("collection %q not described", name)
	return krt.CollectionInfo{}
}

func TestPanicIsIsolatedAndRetried(t *testing.T) {
	g, in := newStatic[Num](krt.WithName("in"))
	out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.N < 0 {
			panic("negative")
		}
		return &Num{Key: n.Key, N: n.N * 2}
	}, krt.WithName("out"))

	in.Set(Num{"a", 1}, Num{"b", 2})
	in.Set(Num{"a", -1}) // panics: a keeps its last good output
	wantN(t, out, "a", 2, "after the panic, the last good output")
	wantN(t, out, "b", 4, "the other inputs keep running")
	ci := info(t, g, "out")
	if ci.Errors != 1 || ci.FailingInputs != 1 || len(ci.RecentErrors) != 1 {
		t.Fatalf("errors=%d failing=%d recent=%v", ci.Errors, ci.FailingInputs, ci.RecentErrors)
	}
	rec := ci.RecentErrors[0]
	if rec.Key != "a" || !strings.Contains(rec.Error, "negative") || !strings.Contains(rec.Stack, "failure_test.go") {
		t.Fatalf("error record = %+v", rec)
	}
	exp, err := g.Explain("out", "a")
	if err != nil || exp.LastError == nil || exp.Input != "a" {
		t.Fatalf("explain = %+v, %v", exp, err)
	}
	in.Set(Num{"a", 5}) // a later change retries
	wantN(t, out, "a", 10, "after the retry")
	if ci := info(t, g, "out"); ci.FailingInputs != 0 {
		t.Fatalf("failing inputs after recovery = %d", ci.FailingInputs)
	}
}

func TestFailKeepsLastGoodAndRetriesOnDependency(t *testing.T) {
	g, in := newStatic[Num]()
	limit := krt.NewStaticSingleton(g, &Num{Key: "limit", N: 10})
	out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		l, _ := krt.FetchOne(ctx, limit)
		if n.N > l.N {
			ctx.Fail(fmt.Errorf("%d exceeds limit %d", n.N, l.N))
			return nil
		}
		return &n
	}, krt.WithName("limited"))
	in.Set(Num{"a", 5})
	in.Set(Num{"a", 50})
	wantN(t, out, "a", 5, "the last good output")
	limit.Set(Num{Key: "limit", N: 100}) // a dependency change retries the failed input
	wantN(t, out, "a", 50, "after the limit rose")
}

func TestKeyConflictHasDeterministicWinner(t *testing.T) {
	g, in := newStatic[Num]()
	// Every input maps to the key "n<N>": inputs with equal N collide.
	out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		return &Num{Key: fmt.Sprintf("n%d", n.N), N: len(n.Key)}
	}, krt.WithName("byN"))
	in.Set(Num{"bbb", 1})
	in.Set(Num{"a", 1}) // "a" < "bbb": a wins
	wantN(t, out, "n1", 1, "the output of input a")
	ci := info(t, g, "byN")
	if ci.Conflicts != 1 || ci.Errors == 0 || !strings.Contains(ci.RecentErrors[len(ci.RecentErrors)-1].Error, "same output key") {
		t.Fatalf("conflict not reported: %+v", ci)
	}
	exp, _ := g.Explain("byN", "n1")
	if exp.Input != "a" || len(exp.Contenders) != 1 || exp.Contenders[0] != "bbb" {
		t.Fatalf("explain = %+v", exp)
	}
	in.Delete("a") // the held-back claimant takes over
	wantN(t, out, "n1", 3, "the output of input bbb")
	if ci := info(t, g, "byN"); ci.Conflicts != 0 {
		t.Fatalf("conflicts after resolution = %d", ci.Conflicts)
	}
}

func TestUpdateRollsBackOnPanic(t *testing.T) {
	g, in := newStatic[Num]()
	in.Set(Num{"a", 1})
	v := g.Version()
	func() {
		defer func() { _ = recover() }()
		g.Update(func(tx *krt.Txn) {
			in.In(tx).Set(Num{"a", 2}, Num{"b", 3})
			in.In(tx).Delete("a")
			panic("boom")
		})
	}()
	if got := in.List(); len(got) != 1 || got[0] != (Num{"a", 1}) {
		t.Fatalf("after rollback: %v", got)
	}
	if g.Version() != v {
		t.Fatalf("version moved from %d to %d", v, g.Version())
	}
}

func TestHandlerPanicIsRecorded(t *testing.T) {
	g, in := newStatic[Num](krt.WithName("in"))
	delivered := make(chan int, 10)
	reg := in.Register(func(b krt.Batch[Num]) {
		if b.Events[0].Latest().N < 0 {
			panic("handler failed")
		}
		delivered <- b.Events[0].Latest().N
	})
	defer reg.Unregister()
	stop := runGraph(t, g)
	defer stop()
	in.Set(Num{"a", -1})
	in.Set(Num{"a", 7})
	if n := <-delivered; n != 7 {
		t.Fatalf("delivered %d", n)
	}
	if ci := info(t, g, "in"); ci.Errors != 1 {
		t.Fatalf("handler panic not recorded: %+v", ci)
	}
}

func TestErrorsAreSentinels(t *testing.T) {
	g := krt.NewGraph()
	_, err := g.Explain("nope", "x")
	if !errors.Is(err, krt.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	_, _, err = g.Items("nope", "", 0, 0)
	if !errors.Is(err, krt.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}
