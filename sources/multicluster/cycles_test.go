package multicluster

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshd/meshd/sources/kube/kubetest"
)

// TestAddRemoveCyclesLeaveNothing adds and removes a remote cluster 20
// times while the graph runs, and checks that goroutines and the heap
// settle back where they were after the first cycle (which warms
// client-go's process-wide caches).
func TestAddRemoveCyclesLeaveNothing(t *testing.T) {
	env := west.Env(t)
	seed(t, env, "mc-cycles", 3)
	rg := newRig(t)
	before := len(rg.g.Describe().Collections)
	kc := kubeconfigOf(t, env.Kubeconfig)
	cycle := func() {
		rg.r.Apply("secret meshd/west", []Cluster{{Name: "west", Kubeconfig: kc}}, nil)
		waitFor(t, "the remote's pods", func() bool { return countNS(rg.in.Pods.List(), "mc-cycles") == 3 })
		rg.r.Apply("secret meshd/west", nil, nil)
		waitFor(t, "the cluster to leave the graph", func() bool {
			return rg.in.Pods.Len() == 0 && len(rg.g.Describe().Collections) == before
		})
	}
	cycle()
	baseline := goleak.IgnoreCurrent()
	heap := settledHeap()
	for range 20 {
		cycle()
	}
	waitSettled(t, "goroutines back to the baseline", func() error {
		return goleak.Find(append([]goleak.Option{baseline}, kubetest.IgnoredGoroutines...)...)
	})
	// The heap may grow a little (client-go's caches, the graph's
	// history); a leaked cluster holds far more than this bound.
	limit := heap + heap/4 + 4<<20
	waitSettled(t, "the heap back near the baseline", func() error {
		if h := settledHeap(); h > limit {
			return heapError{h, heap}
		}
		return nil
	})
}

type heapError struct{ now, baseline uint64 }

func (e heapError) Error() string {
	return "heap " + mib(e.now) + " against " + mib(e.baseline) + " at the baseline"
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// settledHeap returns the live heap after a full collection.
func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// waitSettled polls check until it returns nil, failing t with its last
// error after 30 s: goroutines of stopped informers end when their
// connections notice, not at once.
func waitSettled(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
