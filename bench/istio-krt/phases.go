package main

import (
	"slices"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

// build runs the initial build of -build and reports its wall and CPU
// time. It leaves the tracker registered on Endpoints.
func (b *bench) build() {
	N, M := b.c.N, b.c.M
	svcs, pods := workload.Services(N), workload.Pods(N, M)
	var dur, cpu time.Duration
	if b.c.Build == "bulk" {
		c0, t0 := metric.CPU(), time.Now()
		b.gr = newInputs(svcs, pods)
		must(b.gr.derive(b.c.SvcLookup))
		if !b.gr.waitSynced() {
			metric.Fatalf("derived collections never synced")
		}
		b.wantSizes("after build")
		dur, cpu = time.Since(t0), metric.CPU()-c0
		b.gr.endpoints.RegisterBatch(observe(b.tr), false)
	} else {
		b.gr = newInputs(nil, nil)
		must(b.gr.derive(b.c.SvcLookup))
		if !b.gr.waitSynced() {
			metric.Fatalf("derived collections never synced")
		}
		b.gr.endpoints.RegisterBatch(observe(b.tr), false)
		for _, p := range pods {
			b.tr.Expect(p.IP, "")
		}
		done := b.tr.Arm()
		c0, t0 := metric.CPU(), time.Now()
		for _, s := range svcs {
			b.gr.services.UpdateObject(s)
		}
		for _, p := range pods {
			b.gr.pods.UpdateObject(p)
		}
		waitOrTimeout(done, b.c.Timeout, "incremental build", b.tr)
		b.waitSizes("after incremental build")
		dur, cpu = time.Since(t0), metric.CPU()-c0
	}
	metric.Emit("initial_build", metric.MS(dur), "ms")
	metric.Emit("initial_build_pods_per_s", float64(M)/dur.Seconds(), "pods/s")
	metric.Emit("initial_build_cpu", metric.MS(cpu), "ms")
}

// wantSizes ends the run unless every pod has a workload and every
// service its endpoints.
func (b *bench) wantSizes(when string) {
	if got := len(b.gr.workloads.List()); got != b.c.M {
		metric.Fatalf("%s: %d workloads, want %d", when, got, b.c.M)
	}
	if got := len(b.gr.endpoints.List()); got != b.c.N {
		metric.Fatalf("%s: %d endpoints, want %d", when, got, b.c.N)
	}
}

// waitSizes waits for wantSizes to hold: an event for the last IP may come
// before Istio has derived the last workload of another service.
func (b *bench) waitSizes(when string) {
	deadline := time.Now().Add(b.c.Timeout)
	for len(b.gr.workloads.List()) != b.c.M || len(b.gr.endpoints.List()) != b.c.N {
		if time.Now().After(deadline) {
			b.wantSizes(when)
		}
		time.Sleep(time.Millisecond)
	}
}

// latency changes one random pod at a time and times each change until an
// Endpoints event holds the new IP.
func (b *bench) latency() {
	b.tr.ResetCounts()
	lat := make([]time.Duration, 0, b.c.LatencyChanges)
	latCPU := make([]time.Duration, 0, b.c.LatencyChanges)
	seen := make([]time.Duration, 0, b.c.LatencyChanges)
	for i := 0; i < b.c.LatencyChanges; i++ {
		j := b.rng.Intn(b.c.M)
		k := workload.PodKey(j, b.c.N)
		cur := b.gr.pods.GetKey(k)
		np := *cur
		np.IP = workload.FreshIP()
		b.tr.Expect(np.IP, "")
		done := b.tr.Arm()
		c0 := metric.CPU()
		t0 := time.Now()
		b.gr.pods.UpdateObject(np)
		waitOrTimeout(done, b.c.Timeout, "single change", b.tr)
		lat = append(lat, time.Since(t0))
		seen = append(seen, b.tr.SeenAt().Sub(t0))
		latCPU = append(latCPU, metric.CPU()-c0)
		ep := b.gr.endpoints.GetKey(workload.ServiceKey(j % b.c.N))
		if ep == nil || !slices.Contains(ep.IPs, np.IP) || slices.Contains(ep.IPs, cur.IP) {
			metric.Fatalf("latency change %d: endpoints for %s do not reflect %s -> %s", i, k, cur.IP, np.IP)
		}
	}
	metric.EmitLatency(lat, seen, latCPU)
	metric.Emit("latency_handler_batches", b.tr.Batches(), "count")
	metric.Emit("latency_handler_events", b.tr.Events(), "count")
	metric.Emit("verify_latency_retries", b.verify(initialDomain, 30*time.Second, "after latency phase"), "count")
}

// churn submits -churn-changes pod IP changes back to back and times them
// until every last IP has been in an Endpoints event.
func (b *bench) churn() {
	b.tr.ResetCounts()
	plan := workload.PlanChanges(b.rng.Perm(b.c.M), b.c.ChurnChanges, b.c.N) // distinct pods while churn-changes <= m
	last := make(map[int]string, min(b.c.ChurnChanges, b.c.M))
	c0, t0 := metric.CPU(), time.Now()
	for _, ch := range plan {
		last[ch.Pod] = b.changePod(ch, last[ch.Pod])
	}
	submit := time.Since(t0)
	waitOrTimeout(b.tr.Arm(), b.c.Timeout, "churn", b.tr)
	dur, cpu := time.Since(t0), metric.CPU()-c0
	metric.Emit("churn_changes", b.c.ChurnChanges, "count")
	metric.Emit("churn_submit", metric.MS(submit), "ms")
	metric.Emit("churn_total", metric.MS(dur), "ms")
	metric.Emit("churn_throughput", float64(b.c.ChurnChanges)/dur.Seconds(), "events/s")
	metric.Emit("churn_cpu", metric.MS(cpu), "ms")
	metric.Emit("churn_handler_batches", b.tr.Batches(), "count")
	metric.Emit("churn_handler_events", b.tr.Events(), "count")
	metric.Emit("verify_churn_retries", b.verify(initialDomain, 60*time.Second, "after churn"), "count")
	for j, ip := range last {
		ep := b.gr.endpoints.GetKey(workload.ServiceKey(j % b.c.N))
		if ep == nil || !slices.Contains(ep.IPs, ip) {
			metric.Fatalf("churn: endpoints miss the final ip %s of pod %d", ip, j)
		}
	}
}

// probe changes one pod -probe-changes times back to back and counts the
// states of its service an Endpoints handler saw.
func (b *bench) probe() {
	if b.c.ProbeChanges <= 0 {
		return
	}
	j := b.rng.Intn(b.c.M)
	b.tr.WatchProbe(workload.ServiceKey(j % b.c.N))
	var ips []string
	prev := ""
	for _, ch := range workload.PlanChanges([]int{j}, b.c.ProbeChanges, b.c.N) {
		prev = b.changePod(ch, prev)
		ips = append(ips, prev)
	}
	waitOrTimeout(b.tr.Arm(), b.c.Timeout, "probe", b.tr)
	time.Sleep(200 * time.Millisecond) // let trailing events land
	seenLists := b.tr.EndProbe()
	seen := map[string]bool{}
	for _, l := range seenLists {
		for _, ip := range ips {
			if slices.Contains(l, ip) {
				seen[ip] = true
			}
		}
	}
	if len(seenLists) == 0 || !slices.Contains(seenLists[len(seenLists)-1], prev) {
		metric.Fatalf("probe: the last endpoints event lacks the final ip")
	}
	metric.Emit("probe_changes", b.c.ProbeChanges, "count")
	metric.Emit("probe_endpoint_events", len(seenLists), "count")
	metric.Emit("probe_distinct_ips_observed", len(seen), "count")
	metric.Emit("verify_probe_retries", b.verify(initialDomain, 30*time.Second, "after probe"), "count")
}

// meshConfig sets a new trust domain, which every workload reads, and
// times it until a Workloads handler has seen all of them updated.
func (b *bench) meshConfig() {
	wc := &workload.Counter{}
	reg := b.gr.workloads.RegisterBatch(count(wc), false)
	done := wc.Arm(newDomain, b.c.M)
	b.tr.ResetCounts()
	c0, t0 := metric.CPU(), time.Now()
	b.gr.mesh.Set(&workload.MeshConfig{TrustDomain: newDomain})
	commit := time.Since(t0)
	select {
	case <-done:
	case <-time.After(b.c.Timeout):
		metric.Fatalf("timeout after %v waiting for %d workload updates", b.c.Timeout, b.c.M)
	}
	dur, cpu := time.Since(t0), metric.CPU()-c0
	reg.UnregisterHandler()
	metric.Emit("meshconfig_change_commit", metric.MS(commit), "ms")
	metric.Emit("meshconfig_change", metric.MS(dur), "ms")
	metric.Emit("meshconfig_workloads_per_s", float64(b.c.M)/dur.Seconds(), "workloads/s")
	metric.Emit("meshconfig_change_cpu", metric.MS(cpu), "ms")
	metric.Emit("meshconfig_endpoint_events", b.tr.Events(), "count")
	metric.Emit("verify_meshconfig_retries", b.verify(newDomain, 30*time.Second, "after mesh-config change"), "count")
}

func must(err error) {
	if err != nil {
		metric.Fatalf("%v", err)
	}
}
