package main

import (
	"context"
	"flag"
	"math/rand"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
	"github.com/meshd/meshd/krt"
)

func main() {
	var c workload.Config
	c.Register(flag.CommandLine, "ns (FilterNamespace + FilterSelects), selector (an index on ns/key=value + FilterSelects), none (an unindexed predicate over every service)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of -profile-phase to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile at the end of -profile-phase to this file (for build: after the memory phase's GC)")
	flag.StringVar(&churnWrites, "churn-writes", "sync", "how the churn phase writes: sync (a Static.Set per change, each its own transaction) or queued (Graph.UpdateLater per change: group commit, as a source feeding a burst would)")
	flag.StringVar(&handlerDelivery, "handler-delivery", "goroutine", "how the endpoints handler is delivered: goroutine (its own, krt's default) or inline (krt.Inline: in the goroutine that commits)")
	flag.IntVar(&parallelism, "parallelism", 0, "goroutines computing one collection's dirty inputs (krt.WithParallelism); 0: krt's default, GOMAXPROCS")
	profilePhase := flag.String("profile-phase", "all", "phase the profiles cover: all, build, latency, churn, probe, meshconfig")
	child := flag.Bool(childFlag, false, "internal: the GOMAXPROCS=1 run a run starts, which starts none itself")
	flag.Parse()
	if err := c.Check(); err != nil {
		metric.Fatalf("%v", err)
	}
	if churnWrites != "sync" && churnWrites != "queued" {
		metric.Fatalf("-churn-writes %s: want sync or queued", churnWrites)
	}
	if handlerDelivery != "goroutine" && handlerDelivery != "inline" {
		metric.Fatalf("-handler-delivery %s: want goroutine or inline", handlerDelivery)
	}
	run(c, &profiler{cpuPath: *cpuProfile, memPath: *memProfile, phase: *profilePhase})
	if !*child {
		measureOneProc()
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		metric.Emit("build_go", info.GoVersion, "version")
	}
	metric.Emit("result", "PASS", "status")
}

func run(c workload.Config, prof *profiler) {
	N, M := c.N, c.M
	metric.Emit("param_services", N, "count")
	metric.Emit("param_pods", M, "count")
	metric.Emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	metric.Emit("param_svc_lookup_"+c.SvcLookup, 1, "flag")
	metric.Emit("param_build_"+c.Build, 1, "flag")
	metric.Emit("param_churn_writes_"+churnWrites, 1, "flag")
	metric.Emit("param_handler_delivery_"+handlerDelivery, 1, "flag")
	prof.begin("all")

	baseInuse, baseAlloc := metric.Heap()

	// ---- initial build ----------------------------------------------------
	svcs, pods := workload.Services(N), workload.Pods(N, M)
	tr := workload.NewTracker()
	var gr *graph
	var buildDur, buildCPU time.Duration
	switch c.Build {
	case "bulk":
		prof.begin("build")
		c0, t0 := metric.CPU(), time.Now()
		gr = newInputs(svcs, pods)
		must(gr.derive(c.SvcLookup))
		if !gr.workloads.HasSynced() || !gr.endpoints.HasSynced() {
			metric.Fatalf("derived collections not synced after construction")
		}
		if got := gr.workloads.Len(); got != M {
			metric.Fatalf("after build: %d workloads, want %d", got, M)
		}
		if got := gr.endpoints.Len(); got != N {
			metric.Fatalf("after build: %d endpoints, want %d", got, N)
		}
		buildDur, buildCPU = time.Since(t0), metric.CPU()-c0
		prof.end("build")
		gr.endpoints.Register(observe(tr), deliveryOptions()...)
	case "incremental":
		gr = newInputs(nil, nil)
		must(gr.derive(c.SvcLookup))
		gr.endpoints.Register(observe(tr), deliveryOptions()...)
	default:
		metric.Fatalf("unknown -build %q (want bulk or incremental)", c.Build)
	}

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- gr.g.Run(ctx) }()

	if c.Build == "incremental" {
		for _, p := range pods {
			tr.Expect(p.IP, "")
		}
		done := tr.Arm()
		prof.begin("build")
		c0, t0 := metric.CPU(), time.Now()
		for _, s := range svcs {
			gr.services.Set(s)
		}
		for _, p := range pods {
			gr.pods.Set(p)
		}
		waitOrTimeout(done, c.Timeout, "incremental build", tr)
		if gr.workloads.Len() != M || gr.endpoints.Len() != N {
			metric.Fatalf("after incremental build: %d workloads, %d endpoints", gr.workloads.Len(), gr.endpoints.Len())
		}
		buildDur, buildCPU = time.Since(t0), metric.CPU()-c0
		prof.end("build")
	}
	svcs, pods = nil, nil
	metric.Emit("initial_build", metric.MS(buildDur), "ms")
	metric.Emit("initial_build_pods_per_s", float64(M)/buildDur.Seconds(), "pods/s")
	metric.Emit("initial_build_cpu", metric.MS(buildCPU), "ms")

	// ---- memory -----------------------------------------------------------
	inuse, alloc := metric.Heap()
	metric.Emit("heap_inuse", inuse, "bytes")
	metric.Emit("heap_inuse_delta", int64(inuse)-int64(baseInuse), "bytes")
	metric.Emit("heap_inuse_delta_per_pod", float64(int64(inuse)-int64(baseInuse))/float64(M), "bytes/pod")
	metric.Emit("heap_alloc_delta_per_pod", float64(int64(alloc)-int64(baseAlloc))/float64(M), "bytes/pod")
	metric.Emit("goroutines", runtime.NumGoroutine(), "count")
	prof.heapAfter("build")

	const domain = "cluster.local"
	metric.Emit("verify_initial_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "initial build"), "count")
	tr.ResetCounts()

	rng := rand.New(rand.NewSource(c.Seed))
	changePod := func(ch workload.Change, prevIP string) string {
		k := ch.Key
		cur, ok := gr.pods.Get(k)
		if !ok {
			metric.Fatalf("pod %s missing", k)
		}
		if prevIP != "" && cur.IP != prevIP {
			metric.Fatalf("pod %s has ip %s, expected %s", k, cur.IP, prevIP)
		}
		np := cur
		np.IP = ch.IP
		tr.Expect(np.IP, cur.IP)
		gr.pods.Set(np)
		return np.IP
	}

	// ---- single-change latency --------------------------------------------
	prof.begin("latency")
	lat := make([]time.Duration, 0, c.LatencyChanges)
	latCPU := make([]time.Duration, 0, c.LatencyChanges)
	seen := make([]time.Duration, 0, c.LatencyChanges)
	for i := 0; i < c.LatencyChanges; i++ {
		j := rng.Intn(M)
		k := workload.PodKey(j, N)
		cur, _ := gr.pods.Get(k)
		np := cur
		np.IP = workload.FreshIP()
		tr.Expect(np.IP, "")
		done := tr.Arm()
		c0 := metric.CPU()
		t0 := time.Now()
		gr.pods.Set(np)
		waitOrTimeout(done, c.Timeout, "single change", tr)
		lat = append(lat, time.Since(t0))
		seen = append(seen, tr.SeenAt().Sub(t0))
		latCPU = append(latCPU, metric.CPU()-c0)
		ep, ok := gr.endpoints.Get(np.Namespace + "/" + np.Labels["app"])
		if !ok || !slices.Contains(ep.IPs, np.IP) || slices.Contains(ep.IPs, cur.IP) {
			metric.Fatalf("latency change %d: endpoints for %s do not reflect %s -> %s", i, k, cur.IP, np.IP)
		}
	}
	prof.end("latency")
	metric.EmitLatency(lat, seen, latCPU)
	metric.Emit("latency_handler_batches", tr.Batches(), "count")
	metric.Emit("latency_handler_events", tr.Events(), "count")
	metric.Emit("verify_latency_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "after latency phase"), "count")

	// ---- churn ------------------------------------------------------------
	tr.ResetCounts()
	plan := workload.PlanChanges(rng.Perm(M), c.ChurnChanges, N) // distinct pods while churn-changes <= M
	last := make(map[int]string, min(c.ChurnChanges, M))
	prof.begin("churn")
	c0, t0 := metric.CPU(), time.Now()
	for _, ch := range plan {
		if churnWrites == "queued" {
			last[ch.Pod] = queuePodChange(gr, tr, ch, last[ch.Pod])
			continue
		}
		last[ch.Pod] = changePod(ch, last[ch.Pod])
	}
	submitDur := time.Since(t0)
	waitOrTimeout(tr.Arm(), c.Timeout, "churn", tr)
	churnDur, churnCPU := time.Since(t0), metric.CPU()-c0
	prof.end("churn")
	metric.Emit("churn_changes", c.ChurnChanges, "count")
	metric.Emit("churn_submit", metric.MS(submitDur), "ms")
	metric.Emit("churn_total", metric.MS(churnDur), "ms")
	metric.Emit("churn_throughput", float64(c.ChurnChanges)/churnDur.Seconds(), "events/s")
	metric.Emit("churn_cpu", metric.MS(churnCPU), "ms")
	metric.Emit("churn_handler_batches", tr.Batches(), "count")
	metric.Emit("churn_handler_events", tr.Events(), "count")
	metric.Emit("verify_churn_retries", verifyEventually(gr, N, M, domain, 60*time.Second, "after churn"), "count")
	for j, ip := range last {
		ep, ok := gr.endpoints.Get(workload.ServiceKey(j % N))
		if !ok || !slices.Contains(ep.IPs, ip) {
			metric.Fatalf("churn: endpoints miss the final ip %s of pod %d", ip, j)
		}
	}

	// ---- intermediate-state probe -----------------------------------------
	if c.ProbeChanges > 0 {
		j := rng.Intn(M)
		tr.WatchProbe(workload.ServiceKey(j % N))
		prof.begin("probe")
		var ips []string
		prev := ""
		for _, ch := range workload.PlanChanges([]int{j}, c.ProbeChanges, N) {
			prev = changePod(ch, prev)
			ips = append(ips, prev)
		}
		waitOrTimeout(tr.Arm(), c.Timeout, "probe", tr)
		prof.end("probe")
		time.Sleep(200 * time.Millisecond) // let any trailing events land, as bench/istio-krt does
		seenLists := tr.EndProbe()
		seen := map[string]bool{}
		for _, l := range seenLists {
			for _, ip := range ips {
				if slices.Contains(l, ip) {
					seen[ip] = true
				}
			}
		}
		nEvents := len(seenLists)
		if nEvents == 0 || !slices.Contains(seenLists[nEvents-1], prev) {
			metric.Fatalf("probe: the last endpoints event lacks the final ip")
		}
		metric.Emit("probe_changes", c.ProbeChanges, "count")
		metric.Emit("probe_endpoint_events", nEvents, "count")
		metric.Emit("probe_distinct_ips_observed", len(seen), "count")
		metric.Emit("verify_probe_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "after probe"), "count")
	}

	// ---- mesh-config change -----------------------------------------------
	// Every workload reads the mesh config, so a new trust domain
	// recomputes all M of them; Endpoints recompute too but, their IPs
	// unchanged, emit nothing (early cutoff).
	if c.MeshChange {
		const newDomain = "example.org"
		wc := &workload.Counter{}
		reg := gr.workloads.Register(count(wc))
		done := wc.Arm(newDomain, M)
		tr.ResetCounts()
		prof.begin("meshconfig")
		c0, t0 := metric.CPU(), time.Now()
		gr.mesh.Set(workload.MeshConfig{TrustDomain: newDomain})
		commit := time.Since(t0)
		select {
		case <-done:
		case <-time.After(c.Timeout):
			metric.Fatalf("timeout after %v waiting for %d workload updates", c.Timeout, M)
		}
		total, totalCPU := time.Since(t0), metric.CPU()-c0
		prof.end("meshconfig")
		reg.Unregister()
		metric.Emit("meshconfig_change_commit", metric.MS(commit), "ms")
		metric.Emit("meshconfig_change", metric.MS(total), "ms")
		metric.Emit("meshconfig_workloads_per_s", float64(M)/total.Seconds(), "workloads/s")
		metric.Emit("meshconfig_change_cpu", metric.MS(totalCPU), "ms")
		metric.Emit("meshconfig_endpoint_events", tr.Events(), "count")
		metric.Emit("verify_meshconfig_retries", verifyEventually(gr, N, M, newDomain, 30*time.Second, "after mesh-config change"), "count")
		measureReadWait(gr, newDomain)
	}

	cancel()
	if err := <-runDone; err != nil && err != context.Canceled {
		metric.Fatalf("graph run: %v", err)
	}
	prof.end("all")
}

// queuePodChange queues ch, a change of a pod whose IP is prevIP ("": as
// committed), with Graph.UpdateLater, and returns its new IP. The tracker
// expects it before it is queued, so that Arm, called once every change
// is queued, waits for all of them.
func queuePodChange(gr *graph, tr *workload.Tracker, ch workload.Change, prevIP string) string {
	if prevIP == "" {
		cur, ok := gr.pods.Get(ch.Key)
		if !ok {
			metric.Fatalf("pod %s missing", ch.Key)
		}
		prevIP = cur.IP
	}
	tr.Expect(ch.IP, prevIP)
	gr.g.UpdateLater(func(tx *krt.Txn) {
		w := gr.pods.In(tx)
		cur, _ := w.Get(ch.Key)
		if cur.IP != prevIP {
			metric.Fatalf("pod %s has ip %s, expected %s", ch.Key, cur.IP, prevIP)
		}
		cur.IP = ch.IP
		w.Set(cur)
	})
	return ch.IP
}

func must(err error) {
	if err != nil {
		metric.Fatalf("%v", err)
	}
}

func waitOrTimeout(ch <-chan struct{}, d time.Duration, what string, t *workload.Tracker) {
	if err := t.Await(ch, d); err != nil {
		metric.Fatalf("waiting for %s: %v", what, err)
	}
}

// observe and count adapt krt's batches to the harness's handlers.
func observe(t *workload.Tracker) func(krt.Batch[workload.Endpoints]) {
	return func(b krt.Batch[workload.Endpoints]) { workload.Observe(t, b.Events, newValue) }
}

func count(c *workload.Counter) func(krt.Batch[workload.Workload]) {
	return func(b krt.Batch[workload.Workload]) { workload.Count(c, b.Events, newValue) }
}

func newValue[T any](e krt.Event[T]) *T { return e.New }
