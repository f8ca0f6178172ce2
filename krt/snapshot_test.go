package krt_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

// stuckGraph is a graph whose "slow" collection blocks on an input of
// N == 2 until release is closed, with an unrelated collection beside it.
type stuckGraph struct {
	g       *krt.Graph
	in      krt.Static[Num]
	slow    krt.Collection[Num]
	other   krt.Static[Num]
	byN     krt.Index[Num]
	entered chan struct{}
	release chan struct{}
}

func newStuckGraph() *stuckGraph { return newStuckGraphWith() }

func newStuckGraphWith(opts ...krt.GraphOption) *stuckGraph {
	sg := &stuckGraph{g: krt.NewGraph(opts...), entered: make(chan struct{}, 1), release: make(chan struct{})}
	sg.in = krt.NewStatic[Num](sg.g, krt.WithName("in"))
	sg.other = krt.NewStatic[Num](sg.g, krt.WithName("other"))
	sg.byN = krt.NewIndex(sg.other, "by-n", func(n Num) []string { return []string{string(rune('0' + n.N))} })
	sg.slow = krt.NewCollection(sg.g, sg.in, func(ctx krt.HandlerContext, n Num) *Num {
		if n.N == 2 {
			sg.entered <- struct{}{}
			<-sg.release
		}
		return &n
	}, krt.WithName("slow"))
	sg.other.Set(Num{"x", 1})
	sg.in.Set(Num{"a", 1})
	return sg
}

// block starts a transaction that blocks in the slow collection and
// returns once the transformation is stuck; the returned channel closes
// when the transaction commits.
func (sg *stuckGraph) block(t *testing.T) <-chan struct{} {
	wrote := make(chan struct{})
	go func() { sg.in.Set(Num{"a", 2}); close(wrote) }()
	select {
	case <-sg.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the transformation never ran")
	}
	return wrote
}

// TestReadsDoNotWaitForABlockedTransformation blocks a transformation
// and checks that every read answers at once from the last committed
// version: Get, List, Len, index lookups, snapshots, Describe, Items,
// Version and a replaying Register, on an unrelated collection and on the
// blocked one. Explain, which needs the writer's state, gives up with
// ErrBusy instead of hanging.
func TestReadsDoNotWaitForABlockedTransformation(t *testing.T) {
	sg := newStuckGraph()
	before := sg.g.Version()
	wrote := sg.block(t)
	reads := []struct {
		name string
		read func() bool // reports whether it saw the committed state
	}{
		{"Get other", func() bool { v, ok := sg.other.Get("x"); return ok && v.N == 1 }},
		{"List other", func() bool { return len(sg.other.List()) == 1 }},
		{"Len other", func() bool { return sg.other.Len() == 1 }},
		{"Lookup other", func() bool { return len(sg.byN.Lookup("1")) == 1 }},
		{"Get blocked", func() bool { v, _ := sg.slow.Get("a"); return v.N == 1 }},
		{"Read", func() bool {
			ok := false
			sg.g.Read(func(s *krt.Snapshot) {
				v, _ := sg.in.At(s).Get("a")
				ok = s.Version() == before && v.N == 1
			})
			return ok
		}},
		{"Version", func() bool { return sg.g.Version() == before }},
		{"Describe", func() bool { return sg.g.Describe().Version == before }},
		{"Items", func() bool {
			items, n, err := sg.g.Items("slow", "", 0, 0)
			return err == nil && n == 1 && len(items) == 1
		}},
		{"Register", func() bool {
			reg := sg.other.Register(func(krt.Batch[Num]) {}, krt.WithReplay())
			reg.Unregister()
			return true
		}},
	}
	for _, r := range reads {
		start := time.Now()
		ok := r.read()
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s waited %v for the blocked transaction", r.name, took)
		}
		if !ok {
			t.Errorf("%s did not see the last committed version", r.name)
		}
	}
	if _, err := sg.g.Explain("slow", "a"); !errors.Is(err, krt.ErrBusy) {
		t.Errorf("Explain during a blocked transaction: %v, want ErrBusy", err)
	}
	close(sg.release)
	<-wrote
	if v, _ := sg.slow.Get("a"); v.N != 2 || sg.g.Version() != before+1 {
		t.Fatalf("after the release: slow[a] = %v at version %d", v, sg.g.Version())
	}
}

// TestStalledTransformationIsReported blocks a transformation past a short
// stall threshold and checks the report: a warning logged with the
// transformation's stack, the collection's Stalls counter, the Stall in
// Describe and Busy, and its end once the transformation returns.
func TestStalledTransformationIsReported(t *testing.T) {
	logs := &logRecords{}
	sg := newStuckGraphWith(krt.WithStallThreshold(20*time.Millisecond), krt.WithLogger(slog.New(logs)))
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- sg.g.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	wrote := sg.block(t)

	var st *krt.Stall
	for deadline := time.Now().Add(5 * time.Second); st == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no stall reported within 5s")
		}
		st = sg.g.Describe().Stalled
	}
	if st.Collection != "slow" || st.Key != "a" || st.For < 20*time.Millisecond {
		t.Errorf("stall = %+v, want collection slow, key a, for >= 20ms", st)
	}
	if !strings.Contains(st.Stack, "newStuckGraphWith") {
		t.Errorf("the stall's stack lacks the transformation's frame:\n%s", st.Stack)
	}
	if b := sg.g.Busy(); b.Stall == nil || b.Key != "a" {
		t.Errorf("Busy = %+v, want the stall and key a", b)
	}
	if n := stallsOf(sg.g, "slow"); n != 1 {
		t.Errorf("slow's Stalls = %d, want 1", n)
	}
	if l := logs.String(); !strings.Contains(l, "transformation stalled") || !strings.Contains(l, "newStuckGraphWith") {
		t.Errorf("log lacks the stall warning with its stack:\n%s", l)
	}
	close(sg.release)
	<-wrote
	for deadline := time.Now().Add(5 * time.Second); sg.g.Describe().Stalled != nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stall is still reported after the transformation returned")
		}
	}
	if n := stallsOf(sg.g, "slow"); n != 1 {
		t.Errorf("slow's Stalls = %d after the stall ended, want it counted once", n)
	}
}

func stallsOf(g *krt.Graph, name string) uint64 {
	for _, c := range g.Describe().Collections {
		if c.Name == name {
			return c.Stalls
		}
	}
	return 0
}

// logRecords is a slog.Handler that keeps every record's message and
// attributes, one line each, for the test to read.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }

func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, b.String())
	return nil
}

func (l *logRecords) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestSnapshotHoldsThroughCommits commits an add, an update and a delete,
// each from another goroutine, while a Read holds a snapshot: every read
// through it still gives the version it was taken at, and after Read
// returns plain reads give the last one, and the snapshot is refused.
func TestSnapshotHoldsThroughCommits(t *testing.T) {
	g, in := newStatic[Num](krt.WithName("in"))
	byN := krt.NewIndex(in, "by-n", func(n Num) []string { return []string{fmt.Sprint(n.N)} })
	in.Set(Num{"a", 1}, Num{"b", 1}, Num{"c", 2})
	var held *krt.Snapshot
	g.Read(func(s *krt.Snapshot) {
		held = s
		for _, write := range []func(){
			func() { in.Set(Num{"d", 1}) },
			func() { in.Set(Num{"a", 2}) },
			func() { in.Delete("b") },
			func() { // a rolled-back transaction must not drop what the snapshot needs
				panicOf(func() {
					g.Update(func(tx *krt.Txn) {
						in.In(tx).Set(Num{"c", 9})
						panic("undo")
					})
				})
			},
		} {
			done := make(chan struct{})
			go func() { defer close(done); write() }()
			<-done
		}
		v := in.At(s)
		if got := v.List(); !slices.Equal(got, []Num{{"a", 1}, {"b", 1}, {"c", 2}}) {
			t.Errorf("List through the snapshot = %v", got)
		}
		if n := v.Len(); n != 3 {
			t.Errorf("Len through the snapshot = %d, want 3", n)
		}
		if got := v.Lookup(byN, "1"); !slices.Equal(got, []Num{{"a", 1}, {"b", 1}}) {
			t.Errorf("Lookup(1) through the snapshot = %v", got)
		}
		if got, ok := v.Get("d"); ok {
			t.Errorf("Get(d) through the snapshot = %v, want none", got)
		}
		if got := in.List(); !slices.Equal(got, []Num{{"a", 2}, {"c", 2}, {"d", 1}}) {
			t.Errorf("plain List inside Read = %v, want the last version", got)
		}
	})
	if got := byN.Lookup("2"); !slices.Equal(got, []Num{{"a", 2}, {"c", 2}}) {
		t.Errorf("Lookup(2) after Read = %v", got)
	}
	if msg := panicOf(func() { in.At(held).Len() }); !strings.Contains(msg, "after its Graph.Read returned") {
		t.Errorf("a snapshot used after Read: panic %q", msg)
	}
}
