package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
	"github.com/meshd/meshd/krt"
)

// The benchmarks below repeat the two phases of the workload that
// krt.WithParallelism is for, so that a profile or `-cpu 1,2` sees many
// of them: run with -cpu 1,2 to compare one core with two.
//
//	go test ./bench/krt -run '^$' -bench 'Workload' -cpu 1,2

// benchScales are the workload sizes of the ladder: services, pods. The
// largest is issue 14's middle scale, where a mesh-config change is
// furthest from the floor; pick it with -bench '/n=5000/'.
var benchScales = [][2]int{{100, 1000}, {1000, 10000}, {5000, 50000}}

// BenchmarkWorkloadBuild measures building the derived collections from
// filled inputs, serial and with two goroutines.
func BenchmarkWorkloadBuild(b *testing.B) {
	for _, sc := range benchScales {
		for _, par := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/m=%d/parallelism=%d", sc[0], sc[1], par), func(b *testing.B) {
				withParallelism(b, par)
				svcs, pods := workload.Services(sc[0]), workload.Pods(sc[0], sc[1])
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					gr := newInputs(svcs, pods)
					b.StartTimer()
					must(gr.derive("ns"))
				}
				b.ReportMetric(float64(sc[1]*b.N)/b.Elapsed().Seconds(), "pods/s")
			})
		}
	}
}

// BenchmarkWorkloadMeshChange measures a mesh-config change, which
// recomputes every workload, serial and with two goroutines.
func BenchmarkWorkloadMeshChange(b *testing.B) {
	for _, sc := range benchScales {
		for _, par := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/m=%d/parallelism=%d", sc[0], sc[1], par), func(b *testing.B) {
				withParallelism(b, par)
				gr := newInputs(workload.Services(sc[0]), workload.Pods(sc[0], sc[1]))
				must(gr.derive("ns"))
				domains := []string{"example.org", "cluster.local"}
				b.ReportAllocs()
				i, cpu0 := 0, metric.CPU()
				for b.Loop() {
					gr.mesh.Set(workload.MeshConfig{TrustDomain: domains[i%2]})
					i++
				}
				b.ReportMetric(float64(metric.CPU()-cpu0)/float64(i), "cpu-ns/op")
				if w, _ := gr.workloads.Get(workload.PodKey(0, sc[0])); w.TrustDomain != domains[(i-1)%2] {
					b.Fatalf("workload has trust domain %q, want %q", w.TrustDomain, domains[(i-1)%2])
				}
				b.ReportMetric(float64(sc[1]*i)/b.Elapsed().Seconds(), "workloads/s")
			})
		}
	}
}

// withParallelism sets the graphs' parallelism for one benchmark.
func withParallelism(b *testing.B, n int) {
	prev := parallelism
	parallelism = n
	b.Cleanup(func() { parallelism = prev })
}

// BenchmarkWorkloadChurn measures the churn phase's unit: one pod-IP
// change, a transaction of its own, through Workloads and Endpoints to an
// Endpoints handler. The changed pods and their IPs are made before the
// timer, so that the figures (and the allocations per change) are the
// engine's and the transformations', not the driver's.
func BenchmarkWorkloadChurn(b *testing.B) {
	for _, sc := range benchScales {
		b.Run(fmt.Sprintf("n=%d/m=%d", sc[0], sc[1]), func(b *testing.B) {
			gr := newInputs(workload.Services(sc[0]), workload.Pods(sc[0], sc[1]))
			must(gr.derive("ns"))
			var events atomic.Int64
			gr.endpoints.Register(func(bt krt.Batch[workload.Endpoints]) { events.Add(int64(len(bt.Events))) })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- gr.g.Run(ctx) }()
			defer func() { cancel(); <-done }()

			// Each pod alternates between two fresh IPs, so every Set is
			// a change.
			pods := make([]workload.Pod, 4096)
			ips := make([][2]string, len(pods))
			for i := range pods {
				pods[i], _ = gr.pods.Get(workload.PodKey(i*7919%sc[1], sc[0]))
				ips[i] = [2]string{workload.FreshIP(), workload.FreshIP()}
			}
			b.ReportAllocs()
			i, cpu0 := 0, metric.CPU()
			for b.Loop() {
				k := i % len(pods)
				pods[k].IP = ips[k][(i/len(pods))%2]
				gr.pods.Set(pods[k])
				i++
			}
			for events.Load() < int64(i) { // the handler's share counts too
				time.Sleep(100 * time.Microsecond)
			}
			b.ReportMetric(float64(metric.CPU()-cpu0)/float64(i), "cpu-ns/op")
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "changes/s")
		})
	}
}
