package krt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// TestFanoutEventsMatchSerial changes a singleton that every one of
// 10,000 outputs reads, as a mesh-config change does, serially and in
// parallel: the batch is large enough to be sorted on two goroutines,
// and both modes must hand the handler the same events in key order.
func TestFanoutEventsMatchSerial(t *testing.T) {
	var got [][]string
	for _, mode := range modelModes {
		got = append(got, fanoutEvents(t, mode.graph(), 10000))
	}
	if len(got[0]) != 10000 {
		t.Fatalf("serial run: %d events, want 10000", len(got[0]))
	}
	if !slices.IsSorted(got[1]) {
		t.Fatal("parallel run: events not in key order")
	}
	if !slices.Equal(got[0], got[1]) {
		t.Fatalf("events differ: serial %d, parallel %d, first difference at %d",
			len(got[0]), len(got[1]), firstDifference(got[0], got[1]))
	}
}

// fanoutEvents builds n items in shuffled order, an output per item
// reading one singleton, changes the singleton and returns the events of
// that change, each as its type, key and new value.
func fanoutEvents(t *testing.T, g *krt.Graph, n int) []string {
	t.Helper()
	items := make([]Num, n)
	for i := range items {
		items[i] = Num{Key: fmt.Sprintf("ns-%d/item-%d", i%13, i), N: i}
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(n, func(i, j int) { items[i], items[j] = items[j], items[i] })
	in := krt.NewStatic[Num](g)
	in.Set(items...)
	cfg := krt.NewStaticSingleton(g, &Num{N: 1})
	out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, it Num) *Num {
		c, _ := krt.FetchOne(ctx, cfg)
		return &Num{Key: it.Key, N: it.N*10 + c.N}
	})
	batches := make(chan krt.Batch[Num], 1)
	out.Register(func(b krt.Batch[Num]) { batches <- b })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done }()
	cfg.Set(Num{N: 2})
	select {
	case b := <-batches:
		lines := make([]string, len(b.Events))
		for i, e := range b.Events {
			lines[i] = fmt.Sprintf("%s %s %d", e.Type, e.Key, e.New.N)
		}
		return lines
	case <-time.After(30 * time.Second):
		t.Fatal("no batch within 30s")
		return nil
	}
}
