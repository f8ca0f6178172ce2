package krttest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/krt/krttest"
)

type Pod struct {
	Name string `json:"name"`
	IP   string `json:"ip"`
}

func (p Pod) ResourceName() string { return p.Name }

// TestTrackedPods is what a test written with krttest looks like.
func TestTrackedPods(t *testing.T) {
	g := krt.NewGraph()
	krttest.Run(t, g)
	pods := krttest.NewStatic(g, krttest.FromJSON[Pod](t, `
		{"name": "a", "ip": "10.0.0.1"}
		{"name": "b"}`))
	ready := krt.NewCollection(g, pods, func(ctx krt.HandlerContext, p Pod) *Pod {
		if p.IP == "" {
			return nil
		}
		return &p
	})
	krttest.ExpectKeys(t, ready, "a")
	ev := krttest.Track(t, g, ready, krt.WithReplay())
	ev.Expect("add a")
	pods.Set(Pod{Name: "b", IP: "10.0.0.2"})
	pods.Delete("a")
	ev.Expect("add b", "delete a")
	pods.Set(Pod{Name: "c"}) // not ready: no event
	ev.Expect()
	krttest.ExpectList(t, ready, Pod{Name: "b", IP: "10.0.0.2"})
}

func TestFromJSONRejectsUnknownFields(t *testing.T) {
	rec := &recorder{TB: t}
	krttest.FromJSON[Pod](rec, `[{"name": "a", "address": "10.0.0.1"}]`)
	if rec.failed == "" {
		t.Fatal("a misspelt field was accepted")
	}
	t.Log(rec.failed)
}

func TestExpectListNamesWhatDiffers(t *testing.T) {
	g := krt.NewGraph()
	pods := krttest.NewStatic(g, []Pod{{Name: "a", IP: "1"}, {Name: "b"}})
	rec := &recorder{TB: t}
	krttest.ExpectList(rec, pods, Pod{Name: "a", IP: "2"}, Pod{Name: "c"})
	for _, want := range []string{"a is", "unexpected b", "missing c"} {
		if !contains(rec.failed, want) {
			t.Fatalf("failure %q does not say %q", rec.failed, want)
		}
	}
}

func ExampleTrack() {
	t := &exampleTB{} // in a test: the test's own t
	defer t.runCleanups()

	g := krt.NewGraph()
	krttest.Run(t, g)
	pods := krttest.NewStatic[Pod](g, nil)
	ev := krttest.Track(t, g, pods)
	pods.Set(Pod{Name: "a"}, Pod{Name: "b"})
	pods.Delete("a")
	ev.Expect("add a", "add b", "delete a") // waits for the handler: no sleep
	fmt.Println(krttest.Keys(pods))
	// Output: [b]
}

func ExampleFromJSON() {
	t := &exampleTB{}
	pods := krttest.FromJSON[Pod](t, `[{"name": "a", "ip": "10.0.0.1"}, {"name": "b"}]`)
	fmt.Println(len(pods), pods[0].IP)
	// Output: 2 10.0.0.1
}

func ExampleExpectKeys() {
	t := &exampleTB{}
	g := krt.NewGraph()
	pods := krttest.NewStatic(g, []Pod{{Name: "b"}, {Name: "a"}})
	krttest.ExpectKeys(t, pods, "a", "b") // passes: any order
	krttest.ExpectKeys(t, pods, "a")
	// Output: krttest_test.Pod/static holds keys ["a" "b"], want ["a"]
}

// exampleTB stands in for a test's *testing.T in the examples: failures
// are printed, and cleanups run when the example ends.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()                   {}
func (e *exampleTB) Cleanup(fn func())         { e.cleanups = append(e.cleanups, fn) }
func (e *exampleTB) Errorf(f string, a ...any) { fmt.Printf(f+"\n", a...) }
func (e *exampleTB) Fatalf(f string, a ...any) { fmt.Printf(f+"\n", a...) }
func (e *exampleTB) runCleanups() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// recorder is a testing.TB whose Fatalf records the message and stops
// only the goroutine, as the real one does, so a test can check failures.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestFlushQueuedWrites: what a source queued is readable after Flush.
func TestFlushQueuedWrites(t *testing.T) {
	g := krt.NewGraph()
	pods := krt.NewStatic[Pod](g)
	pods.SetLater(Pod{Name: "a", IP: "10.0.0.1"})
	pods.SetLater(Pod{Name: "b", IP: "10.0.0.2"})
	pods.DeleteLater("a")
	if v := krttest.Flush(t, g); v != g.Version() || v == 0 {
		t.Fatalf("Flush returned version %d, the graph is at %d", v, g.Version())
	}
	krttest.ExpectKeys(t, pods, "b")
}
