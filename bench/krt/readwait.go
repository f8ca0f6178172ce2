package main

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

// readWaitProbe measures how long readers wait while a transaction runs:
// a goroutine calls read back to back, and the calls that overlapped the
// transaction are kept.
type readWaitProbe struct {
	stop    atomic.Bool
	started chan struct{}
	wg      sync.WaitGroup
	reads   []timedRead // written by the probe goroutine only
}

type timedRead struct {
	start time.Time
	took  time.Duration
}

// startReadWaitProbe starts the probe goroutine and returns once it reads.
func startReadWaitProbe(read func()) *readWaitProbe {
	p := &readWaitProbe{started: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for first := true; !p.stop.Load(); first = false {
			t0 := time.Now()
			read()
			p.reads = append(p.reads, timedRead{t0, time.Since(t0)})
			if first {
				close(p.started)
			}
		}
	}()
	<-p.started
	return p
}

// around runs txn, then stops the probe and returns the sorted durations
// of the reads that overlapped txn.
func (p *readWaitProbe) around(txn func()) []time.Duration {
	begin := time.Now()
	txn()
	end := time.Now()
	p.stop.Store(true)
	p.wg.Wait()
	var waits []time.Duration
	for _, r := range p.reads {
		if r.start.Before(end) && r.start.Add(r.took).After(begin) {
			waits = append(waits, r.took)
		}
	}
	slices.Sort(waits)
	return waits
}

// measureReadWait runs two more mesh-config changes, away from domain and
// back, with a reader of another collection (Services) timed during the
// first. They are apart from the measured change because the reader,
// which never sleeps, would count in its CPU time.
func measureReadWait(gr *graph, domain string) {
	probe := startReadWaitProbe(func() { gr.services.Get(workload.ServiceKey(0)) })
	waits := probe.around(func() { gr.mesh.Set(workload.MeshConfig{TrustDomain: "probe." + domain}) })
	gr.mesh.Set(workload.MeshConfig{TrustDomain: domain})
	metric.Emit("read_wait_samples", len(waits), "count")
	if len(waits) > 0 {
		metric.Emit("read_wait_p50", metric.US(metric.Percentile(waits, 0.50)), "us")
		metric.Emit("read_wait_p99", metric.US(metric.Percentile(waits, 0.99)), "us")
	}
}
