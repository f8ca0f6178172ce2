package krt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

// withinTimeout fails t if fn has not returned within krttest.Timeout:
// the misuse these tests make used to wait forever.
func withinTimeout(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(krttest.Timeout):
		t.Fatal("deadlocked")
	}
}

// panicOf runs fn and returns what it panicked with, as a string.
func panicOf(fn func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "non-string panic"
			}
		}
	}()
	fn()
	return ""
}

func TestGetInsideTransformationNamesFetch(t *testing.T) {
	g, in := newStatic[Num]()
	other := krt.NewStatic[Num](g)
	other.Set(Num{"x", 1})
	idx := krt.NewIndex(other, "n", func(Num) []string { return nil })
	reads := map[string]func(){
		"Get":    func() { other.Get("x") },
		"List":   func() { other.List() },
		"Lookup": func() { idx.Lookup("") },
		"Read":   func() { g.Read(func(*krt.Snapshot) {}) },
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			out := krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
				read()
				return &n
			}, krt.WithName("reads-"+name))
			withinTimeout(t, func() { in.Set(Num{"a-" + name, 1}) })
			ci := info(t, g, "reads-"+name)
			if ci.Errors == 0 || out.Len() != 0 {
				t.Fatalf("errors=%d outputs=%d: the misuse was not caught", ci.Errors, out.Len())
			}
			if msg := ci.RecentErrors[0].Error; !strings.Contains(msg, "krt.Fetch") {
				t.Fatalf("error %q does not name the fix", msg)
			}
		})
	}
}

func TestWritesThatWouldWaitForThemselvesPanic(t *testing.T) {
	g, in := newStatic[Num]()
	cases := []struct {
		name, fix string
		misuse    func()
	}{
		{"Set inside Update", "Static.In(tx)", func() { g.Update(func(*krt.Txn) { in.Set(Num{"a", 1}) }) }},
		{"Get inside Update", "Static.In(tx).Get", func() { g.Update(func(*krt.Txn) { in.Get("a") }) }},
		{"Set inside Read", "after Read returns", func() { g.Read(func(*krt.Snapshot) { in.Set(Num{"a", 1}) }) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var msg string
			withinTimeout(t, func() { msg = panicOf(tc.misuse) })
			if !strings.Contains(msg, tc.fix) {
				t.Fatalf("panic %q does not name the fix %q", msg, tc.fix)
			}
			// The graph is still usable.
			withinTimeout(t, func() { in.Set(Num{"b", 2}) })
		})
	}
	if _, ok := in.Get("a"); ok {
		t.Fatal("a write that panicked was kept")
	}
}

func TestWriteInsideTransformationIsCaught(t *testing.T) {
	g, in := newStatic[Num]()
	sink := krt.NewStatic[Num](g)
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		sink.Set(n)
		return &n
	}, krt.WithName("writes"))
	withinTimeout(t, func() { in.Set(Num{"a", 1}) })
	ci := info(t, g, "writes")
	if ci.Errors == 0 || !strings.Contains(ci.RecentErrors[0].Error, "writes nothing") {
		t.Fatalf("errors %+v", ci.RecentErrors)
	}
}
