package main

import (
	"slices"
	"time"
)

// build runs the initial build of -build and reports its wall and CPU
// time. It leaves the tracker registered on Endpoints.
func (b *bench) build() {
	N, M := b.c.n, b.c.m
	svcs, pods := genServices(N), genPods(N, M)
	var dur, cpu time.Duration
	if b.c.build == "bulk" {
		c0, t0 := cpuTime(), time.Now()
		b.gr = newInputs(svcs, pods)
		must(b.gr.derive(b.c.svcLookup))
		if !b.gr.waitSynced() {
			fatalf("derived collections never synced")
		}
		b.wantSizes("after build")
		dur, cpu = time.Since(t0), cpuTime()-c0
		b.gr.endpoints.RegisterBatch(b.tr.handle, false)
	} else {
		b.gr = newInputs(nil, nil)
		must(b.gr.derive(b.c.svcLookup))
		if !b.gr.waitSynced() {
			fatalf("derived collections never synced")
		}
		b.gr.endpoints.RegisterBatch(b.tr.handle, false)
		for _, p := range pods {
			b.tr.expect(p.IP, "")
		}
		done := b.tr.arm()
		c0, t0 := cpuTime(), time.Now()
		for _, s := range svcs {
			b.gr.services.UpdateObject(s)
		}
		for _, p := range pods {
			b.gr.pods.UpdateObject(p)
		}
		waitOrTimeout(done, b.c.timeout, "incremental build", b.tr)
		b.waitSizes("after incremental build")
		dur, cpu = time.Since(t0), cpuTime()-c0
	}
	emit("initial_build", ms(dur), "ms")
	emit("initial_build_pods_per_s", float64(M)/dur.Seconds(), "pods/s")
	emit("initial_build_cpu", ms(cpu), "ms")
}

// wantSizes ends the run unless every pod has a workload and every
// service its endpoints.
func (b *bench) wantSizes(when string) {
	if got := len(b.gr.workloads.List()); got != b.c.m {
		fatalf("%s: %d workloads, want %d", when, got, b.c.m)
	}
	if got := len(b.gr.endpoints.List()); got != b.c.n {
		fatalf("%s: %d endpoints, want %d", when, got, b.c.n)
	}
}

// waitSizes waits for wantSizes to hold: an event for the last IP may come
// before Istio has derived the last workload of another service.
func (b *bench) waitSizes(when string) {
	deadline := time.Now().Add(b.c.timeout)
	for len(b.gr.workloads.List()) != b.c.m || len(b.gr.endpoints.List()) != b.c.n {
		if time.Now().After(deadline) {
			b.wantSizes(when)
		}
		time.Sleep(time.Millisecond)
	}
}

// latency changes one random pod at a time and times each change until an
// Endpoints event holds the new IP.
func (b *bench) latency() {
	b.tr.resetCounts()
	lat := make([]time.Duration, 0, b.c.latencyChanges)
	for i := 0; i < b.c.latencyChanges; i++ {
		j := b.rng.Intn(b.c.m)
		k := podKey(j, b.c.n)
		cur := b.gr.pods.GetKey(k)
		np := *cur
		np.IP = freshIP()
		b.tr.expect(np.IP, "")
		done := b.tr.arm()
		t0 := time.Now()
		b.gr.pods.UpdateObject(np)
		waitOrTimeout(done, b.c.timeout, "single change", b.tr)
		lat = append(lat, time.Since(t0))
		ep := b.gr.endpoints.GetKey(serviceKey(j % b.c.n))
		if ep == nil || !slices.Contains(ep.IPs, np.IP) || slices.Contains(ep.IPs, cur.IP) {
			fatalf("latency change %d: endpoints for %s do not reflect %s -> %s", i, k, cur.IP, np.IP)
		}
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		emit("latency_p50", us(percentile(lat, 0.50)), "us")
		emit("latency_p99", us(percentile(lat, 0.99)), "us")
		emit("latency_max", us(lat[len(lat)-1]), "us")
	}
	emit("latency_handler_batches", b.tr.batches.Load(), "count")
	emit("latency_handler_events", b.tr.events.Load(), "count")
	emit("verify_latency_retries", b.verify(initialDomain, 30*time.Second, "after latency phase"), "count")
}

// churn submits -churn-changes pod IP changes back to back and times them
// until every last IP has been in an Endpoints event.
func (b *bench) churn() {
	b.tr.resetCounts()
	perm := b.rng.Perm(b.c.m) // distinct pods while churn-changes <= m
	last := make(map[int]string)
	c0, t0 := cpuTime(), time.Now()
	for i := 0; i < b.c.churnChanges; i++ {
		j := perm[i%b.c.m]
		last[j] = b.changePod(j, last[j])
	}
	submit := time.Since(t0)
	waitOrTimeout(b.tr.arm(), b.c.timeout, "churn", b.tr)
	dur, cpu := time.Since(t0), cpuTime()-c0
	emit("churn_changes", b.c.churnChanges, "count")
	emit("churn_submit", ms(submit), "ms")
	emit("churn_total", ms(dur), "ms")
	emit("churn_throughput", float64(b.c.churnChanges)/dur.Seconds(), "events/s")
	emit("churn_cpu", ms(cpu), "ms")
	emit("churn_handler_batches", b.tr.batches.Load(), "count")
	emit("churn_handler_events", b.tr.events.Load(), "count")
	emit("verify_churn_retries", b.verify(initialDomain, 60*time.Second, "after churn"), "count")
	for j, ip := range last {
		ep := b.gr.endpoints.GetKey(serviceKey(j % b.c.n))
		if ep == nil || !slices.Contains(ep.IPs, ip) {
			fatalf("churn: endpoints miss the final ip %s of pod %d", ip, j)
		}
	}
}

// probe changes one pod -probe-changes times back to back and counts the
// states of its service an Endpoints handler saw.
func (b *bench) probe() {
	if b.c.probeChanges <= 0 {
		return
	}
	j := b.rng.Intn(b.c.m)
	b.tr.watchProbe(serviceKey(j % b.c.n))
	var ips []string
	prev := ""
	for i := 0; i < b.c.probeChanges; i++ {
		prev = b.changePod(j, prev)
		ips = append(ips, prev)
	}
	waitOrTimeout(b.tr.arm(), b.c.timeout, "probe", b.tr)
	time.Sleep(200 * time.Millisecond) // let trailing events land
	seenLists := b.tr.endProbe()
	seen := map[string]bool{}
	for _, l := range seenLists {
		for _, ip := range ips {
			if slices.Contains(l, ip) {
				seen[ip] = true
			}
		}
	}
	if len(seenLists) == 0 || !slices.Contains(seenLists[len(seenLists)-1], prev) {
		fatalf("probe: the last endpoints event lacks the final ip")
	}
	emit("probe_changes", b.c.probeChanges, "count")
	emit("probe_endpoint_events", len(seenLists), "count")
	emit("probe_distinct_ips_observed", len(seen), "count")
	emit("verify_probe_retries", b.verify(initialDomain, 30*time.Second, "after probe"), "count")
}

// meshConfig sets a new trust domain, which every workload reads, and
// times it until a Workloads handler has seen all of them updated.
func (b *bench) meshConfig() {
	wc := &workloadCounter{}
	reg := b.gr.workloads.RegisterBatch(wc.handle, false)
	done := wc.arm(newDomain, b.c.m)
	b.tr.resetCounts()
	c0, t0 := cpuTime(), time.Now()
	b.gr.mesh.Set(&MeshConfig{TrustDomain: newDomain})
	commit := time.Since(t0)
	select {
	case <-done:
	case <-time.After(b.c.timeout):
		fatalf("timeout after %v waiting for %d workload updates", b.c.timeout, b.c.m)
	}
	dur, cpu := time.Since(t0), cpuTime()-c0
	reg.UnregisterHandler()
	emit("meshconfig_change_commit", ms(commit), "ms")
	emit("meshconfig_change", ms(dur), "ms")
	emit("meshconfig_workloads_per_s", float64(b.c.m)/dur.Seconds(), "workloads/s")
	emit("meshconfig_change_cpu", ms(cpu), "ms")
	emit("meshconfig_endpoint_events", b.tr.events.Load(), "count")
	emit("verify_meshconfig_retries", b.verify(newDomain, 30*time.Second, "after mesh-config change"), "count")
}

func must(err error) {
	if err != nil {
		fatalf("%v", err)
	}
}
