package main

import (
	"flag"
	"math/rand"
	"runtime"
	"runtime/debug"
	"time"

	istiolog "istio.io/istio/pkg/log"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

func main() {
	var c workload.Config
	c.Register(flag.CommandLine, "ns (namespace index + FilterSelects), selector (an index on ns/key=value + FilterSelects), none (an unindexed predicate over every service)")
	flag.Parse()
	// Istio logs to stdout by default; stdout is for metric lines.
	logs := istiolog.DefaultOptions()
	logs.OutputPaths = []string{"stderr"}
	if err := istiolog.Configure(logs); err != nil {
		metric.Fatalf("istio logging: %v", err)
	}
	if err := c.Check(); err != nil {
		metric.Fatalf("%v", err)
	}
	run(c)
}

// bench is one run: the graph, the Endpoints handler that times it, and
// the random source choosing the pods that change.
type bench struct {
	c   workload.Config
	gr  *graph
	tr  *workload.Tracker
	rng *rand.Rand
}

const (
	initialDomain = "cluster.local"
	newDomain     = "example.org"
)

func run(c workload.Config) {
	metric.Emit("param_services", c.N, "count")
	metric.Emit("param_pods", c.M, "count")
	metric.Emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	metric.Emit("param_svc_lookup_"+c.SvcLookup, 1, "flag")
	metric.Emit("param_build_"+c.Build, 1, "flag")
	b := &bench{c: c, tr: workload.NewTracker(), rng: rand.New(rand.NewSource(c.Seed))}
	baseInuse, baseAlloc := metric.Heap()
	b.build()
	b.memory(baseInuse, baseAlloc)
	metric.Emit("verify_initial_retries", b.verify(initialDomain, 30*time.Second, "initial build"), "count")
	b.latency()
	b.churn()
	b.probe()
	if c.MeshChange {
		b.meshConfig()
	}
	close(b.gr.stop)
	if info, ok := debug.ReadBuildInfo(); ok {
		metric.Emit("build_go", info.GoVersion, "version")
	}
	metric.Emit("result", "PASS", "status")
}

func (b *bench) verify(domain string, d time.Duration, what string) int {
	return verifyEventually(b.gr, b.c.N, b.c.M, domain, d, what)
}

// memory reports the heap the graph holds, against the baseline taken
// before the inputs were generated.
func (b *bench) memory(baseInuse, baseAlloc uint64) {
	inuse, alloc := metric.Heap()
	M := float64(b.c.M)
	metric.Emit("heap_inuse", inuse, "bytes")
	metric.Emit("heap_inuse_delta", int64(inuse)-int64(baseInuse), "bytes")
	metric.Emit("heap_inuse_delta_per_pod", float64(int64(inuse)-int64(baseInuse))/M, "bytes/pod")
	metric.Emit("heap_alloc_delta_per_pod", float64(int64(alloc)-int64(baseAlloc))/M, "bytes/pod")
	metric.Emit("goroutines", runtime.NumGoroutine(), "count")
}

// changePod gives a pod the fresh IP ch plans; prevIP, when set, is the
// IP this run last gave it, which the tracker no longer awaits.
func (b *bench) changePod(ch workload.Change, prevIP string) string {
	k := ch.Key
	cur := b.gr.pods.GetKey(k)
	if cur == nil {
		metric.Fatalf("pod %s missing", k)
	}
	if prevIP != "" && cur.IP != prevIP {
		metric.Fatalf("pod %s has ip %s, expected %s", k, cur.IP, prevIP)
	}
	np := *cur
	np.IP = ch.IP
	b.tr.Expect(np.IP, cur.IP)
	b.gr.pods.UpdateObject(np)
	return np.IP
}
