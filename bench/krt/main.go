package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "number of services")
	m := flag.Int("m", 10000, "number of pods")
	latencyChanges := flag.Int("latency-changes", 200, "single-change latency samples")
	churnChanges := flag.Int("churn-changes", 10000, "pod IP changes in the churn phase")
	probeChanges := flag.Int("probe-changes", 100, "back-to-back changes of one pod, to see whether handlers observe intermediate states")
	svcLookup := flag.String("svc-lookup", "ns", "how workloads find their services: ns (FilterNamespace + FilterSelects), selector (an index on ns/key=value + FilterSelects), none (an unindexed predicate over every service)")
	build := flag.String("build", "bulk", "initial build mode: bulk (inputs filled, then derived collections created) or incremental (derived collections on empty inputs, then one transaction per input)")
	meshChange := flag.Bool("mesh-change", true, "run the mesh-config change phase")
	timeout := flag.Duration("timeout", 5*time.Minute, "timeout for any single wait")
	seed := flag.Int64("seed", 1, "seed for choosing which pods change")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of -profile-phase to this file")
	memProfile := flag.String("memprofile", "", "write a heap profile at the end of -profile-phase to this file (for build: after the memory phase's GC)")
	profilePhase := flag.String("profile-phase", "all", "phase the profiles cover: all, build, latency, churn, probe, meshconfig")
	flag.Parse()
	if *n <= 0 || *m < *n {
		fatalf("need 0 < n <= m")
	}
	prof := &profiler{cpuPath: *cpuProfile, memPath: *memProfile, phase: *profilePhase}
	run(config{
		n: *n, m: *m, latencyChanges: *latencyChanges, churnChanges: *churnChanges, probeChanges: *probeChanges,
		svcLookup: *svcLookup, build: *build, meshChange: *meshChange, timeout: *timeout, seed: *seed,
	}, prof)
}

type config struct {
	n, m                                       int
	latencyChanges, churnChanges, probeChanges int
	svcLookup, build                           string
	meshChange                                 bool
	timeout                                    time.Duration
	seed                                       int64
}

func run(c config, prof *profiler) {
	N, M := c.n, c.m
	emit("param_services", N, "count")
	emit("param_pods", M, "count")
	emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	emit("param_svc_lookup_"+c.svcLookup, 1, "flag")
	emit("param_build_"+c.build, 1, "flag")
	prof.begin("all")

	baseInuse, baseAlloc := heapStats()

	// ---- initial build ----------------------------------------------------
	svcs, pods := genServices(N), genPods(N, M)
	tr := newTracker()
	var gr *graph
	var buildDur, buildCPU time.Duration
	switch c.build {
	case "bulk":
		prof.begin("build")
		c0, t0 := cpuTime(), time.Now()
		gr = newInputs(svcs, pods)
		must(gr.derive(c.svcLookup))
		if !gr.workloads.HasSynced() || !gr.endpoints.HasSynced() {
			fatalf("derived collections not synced after construction")
		}
		if got := gr.workloads.Len(); got != M {
			fatalf("after build: %d workloads, want %d", got, M)
		}
		if got := gr.endpoints.Len(); got != N {
			fatalf("after build: %d endpoints, want %d", got, N)
		}
		buildDur, buildCPU = time.Since(t0), cpuTime()-c0
		prof.end("build")
		gr.endpoints.Register(tr.handle)
	case "incremental":
		gr = newInputs(nil, nil)
		must(gr.derive(c.svcLookup))
		gr.endpoints.Register(tr.handle)
	default:
		fatalf("unknown -build %q (want bulk or incremental)", c.build)
	}

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- gr.g.Run(ctx) }()

	if c.build == "incremental" {
		for _, p := range pods {
			tr.expect(p.IP, "")
		}
		done := tr.arm()
		prof.begin("build")
		c0, t0 := cpuTime(), time.Now()
		for _, s := range svcs {
			gr.services.Set(s)
		}
		for _, p := range pods {
			gr.pods.Set(p)
		}
		waitOrTimeout(done, c.timeout, "incremental build", tr)
		if gr.workloads.Len() != M || gr.endpoints.Len() != N {
			fatalf("after incremental build: %d workloads, %d endpoints", gr.workloads.Len(), gr.endpoints.Len())
		}
		buildDur, buildCPU = time.Since(t0), cpuTime()-c0
		prof.end("build")
	}
	svcs, pods = nil, nil
	emit("initial_build", ms(buildDur), "ms")
	emit("initial_build_pods_per_s", float64(M)/buildDur.Seconds(), "pods/s")
	emit("initial_build_cpu", ms(buildCPU), "ms")

	// ---- memory -----------------------------------------------------------
	inuse, alloc := heapStats()
	emit("heap_inuse", inuse, "bytes")
	emit("heap_inuse_delta", int64(inuse)-int64(baseInuse), "bytes")
	emit("heap_inuse_delta_per_pod", float64(int64(inuse)-int64(baseInuse))/float64(M), "bytes/pod")
	emit("heap_alloc_delta_per_pod", float64(int64(alloc)-int64(baseAlloc))/float64(M), "bytes/pod")
	emit("goroutines", runtime.NumGoroutine(), "count")
	prof.heapAfter("build")

	const domain = "cluster.local"
	emit("verify_initial_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "initial build"), "count")
	tr.resetCounts()

	rng := rand.New(rand.NewSource(c.seed))
	changePod := func(j int, prevIP string) string {
		k := podKey(j, N)
		cur, ok := gr.pods.Get(k)
		if !ok {
			fatalf("pod %s missing", k)
		}
		if prevIP != "" && cur.IP != prevIP {
			fatalf("pod %s has ip %s, expected %s", k, cur.IP, prevIP)
		}
		np := cur
		np.IP = freshIP()
		tr.expect(np.IP, cur.IP)
		gr.pods.Set(np)
		return np.IP
	}

	// ---- single-change latency --------------------------------------------
	prof.begin("latency")
	lat := make([]time.Duration, 0, c.latencyChanges)
	for i := 0; i < c.latencyChanges; i++ {
		j := rng.Intn(M)
		k := podKey(j, N)
		cur, _ := gr.pods.Get(k)
		np := cur
		np.IP = freshIP()
		tr.expect(np.IP, "")
		done := tr.arm()
		t0 := time.Now()
		gr.pods.Set(np)
		waitOrTimeout(done, c.timeout, "single change", tr)
		lat = append(lat, time.Since(t0))
		ep, ok := gr.endpoints.Get(np.Namespace + "/" + np.Labels["app"])
		if !ok || !slices.Contains(ep.IPs, np.IP) || slices.Contains(ep.IPs, cur.IP) {
			fatalf("latency change %d: endpoints for %s do not reflect %s -> %s", i, k, cur.IP, np.IP)
		}
	}
	prof.end("latency")
	if len(lat) > 0 {
		slices.Sort(lat)
		emit("latency_p50", us(percentile(lat, 0.50)), "us")
		emit("latency_p99", us(percentile(lat, 0.99)), "us")
		emit("latency_max", us(lat[len(lat)-1]), "us")
	}
	emit("latency_handler_batches", tr.batches.Load(), "count")
	emit("latency_handler_events", tr.events.Load(), "count")
	emit("verify_latency_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "after latency phase"), "count")

	// ---- churn ------------------------------------------------------------
	tr.resetCounts()
	perm := rng.Perm(M) // distinct pods while churn-changes <= M
	last := make(map[int]string)
	prof.begin("churn")
	c0, t0 := cpuTime(), time.Now()
	for i := 0; i < c.churnChanges; i++ {
		j := perm[i%M]
		last[j] = changePod(j, last[j])
	}
	submitDur := time.Since(t0)
	waitOrTimeout(tr.arm(), c.timeout, "churn", tr)
	churnDur, churnCPU := time.Since(t0), cpuTime()-c0
	prof.end("churn")
	emit("churn_changes", c.churnChanges, "count")
	emit("churn_submit", ms(submitDur), "ms")
	emit("churn_total", ms(churnDur), "ms")
	emit("churn_throughput", float64(c.churnChanges)/churnDur.Seconds(), "events/s")
	emit("churn_cpu", ms(churnCPU), "ms")
	emit("churn_handler_batches", tr.batches.Load(), "count")
	emit("churn_handler_events", tr.events.Load(), "count")
	emit("verify_churn_retries", verifyEventually(gr, N, M, domain, 60*time.Second, "after churn"), "count")
	for j, ip := range last {
		ep, ok := gr.endpoints.Get(serviceKey(j % N))
		if !ok || !slices.Contains(ep.IPs, ip) {
			fatalf("churn: endpoints miss the final ip %s of pod %d", ip, j)
		}
	}

	// ---- intermediate-state probe -----------------------------------------
	if c.probeChanges > 0 {
		j := rng.Intn(M)
		tr.mu.Lock()
		tr.probeSvc = serviceKey(j % N)
		tr.mu.Unlock()
		prof.begin("probe")
		var ips []string
		prev := ""
		for i := 0; i < c.probeChanges; i++ {
			prev = changePod(j, prev)
			ips = append(ips, prev)
		}
		waitOrTimeout(tr.arm(), c.timeout, "probe", tr)
		prof.end("probe")
		time.Sleep(200 * time.Millisecond) // let any trailing events land, as bench/istio-krt does
		tr.mu.Lock()
		seen := map[string]bool{}
		for _, l := range tr.probeSeen {
			for _, ip := range ips {
				if slices.Contains(l, ip) {
					seen[ip] = true
				}
			}
		}
		nEvents := len(tr.probeSeen)
		lastSeen := tr.probeSeen[len(tr.probeSeen)-1]
		tr.probeSvc = ""
		tr.mu.Unlock()
		if !slices.Contains(lastSeen, prev) {
			fatalf("probe: the last endpoints event lacks the final ip")
		}
		emit("probe_changes", c.probeChanges, "count")
		emit("probe_endpoint_events", nEvents, "count")
		emit("probe_distinct_ips_observed", len(seen), "count")
		emit("verify_probe_retries", verifyEventually(gr, N, M, domain, 30*time.Second, "after probe"), "count")
	}

	// ---- mesh-config change -----------------------------------------------
	// Every workload reads the mesh config, so a new trust domain
	// recomputes all M of them; Endpoints recompute too but, their IPs
	// unchanged, emit nothing (early cutoff).
	if c.meshChange {
		const newDomain = "example.org"
		wc := &workloadCounter{}
		reg := gr.workloads.Register(wc.handle)
		done := wc.arm(newDomain, M)
		tr.resetCounts()
		prof.begin("meshconfig")
		c0, t0 := cpuTime(), time.Now()
		gr.mesh.Set(MeshConfig{TrustDomain: newDomain})
		commit := time.Since(t0)
		select {
		case <-done:
		case <-time.After(c.timeout):
			fatalf("timeout after %v waiting for %d workload updates", c.timeout, M)
		}
		total, totalCPU := time.Since(t0), cpuTime()-c0
		prof.end("meshconfig")
		reg.Unregister()
		emit("meshconfig_change_commit", ms(commit), "ms")
		emit("meshconfig_change", ms(total), "ms")
		emit("meshconfig_workloads_per_s", float64(M)/total.Seconds(), "workloads/s")
		emit("meshconfig_change_cpu", ms(totalCPU), "ms")
		emit("meshconfig_endpoint_events", tr.events.Load(), "count")
		emit("verify_meshconfig_retries", verifyEventually(gr, N, M, newDomain, 30*time.Second, "after mesh-config change"), "count")
	}

	cancel()
	if err := <-runDone; err != nil && err != context.Canceled {
		fatalf("graph run: %v", err)
	}
	prof.end("all")
	if info, ok := debug.ReadBuildInfo(); ok {
		emit("build_go", info.GoVersion, "version")
	}
	emit("result", "PASS", "status")
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}

// emit prints one "metric value unit" line, the format bench/compare.sh reads.
func emit(metric string, value any, unit string) {
	if v, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, v, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// heapStats returns HeapInuse and HeapAlloc after two collections.
func heapStats() (inuse, alloc uint64) {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapInuse, s.HeapAlloc
}

func waitOrTimeout(ch <-chan struct{}, d time.Duration, what string, t *tracker) {
	select {
	case <-ch:
	case <-time.After(d):
		fatalf("timeout after %v waiting for %s (%d expected IPs still unseen)", d, what, t.pendingCount())
	}
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(idx, len(sorted)-1))]
}
