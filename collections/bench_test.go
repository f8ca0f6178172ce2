package collections

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
)

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start, which unlike
// ns/op does not grow when other processes compete for the cores.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

var benchSizes = []struct{ services, podsPer int }{{100, 10}, {1000, 10}}

// BenchmarkBuild measures deriving the whole model from filled inputs:
// the start-up cost.
func BenchmarkBuild(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("services=%d/pods=%d", sz.services, sz.services*sz.podsPer), func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				g := krt.NewGraph()
				in := newTestInputs(g)
				populate(in, "ns", sz.services, sz.podsPer)
				m := Build(g, in.Inputs())
				if m.ClusterLoadAssignments.Len() != 2*sz.services {
					b.Fatalf("%d CLAs", m.ClusterLoadAssignments.Len())
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkPodChange measures one pod IP change propagated through a
// built model: its workload, endpoints and load assignments.
func BenchmarkPodChange(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("services=%d/pods=%d", sz.services, sz.services*sz.podsPer), func(b *testing.B) {
			g := krt.NewGraph()
			in := newTestInputs(g)
			populate(in, "ns", sz.services, sz.podsPer)
			in.Set(httpRoute("ns", "split", serviceParent("svc-0", nil),
				gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{backend("svc-1", 80, 90), backend("svc-2", 80, 10)}}))
			m := Build(g, in.Inputs())
			sel := map[string]string{"app": "svc-7"}
			b.ReportAllocs()
			start := cpuTime()
			i := 0
			for b.Loop() {
				i++
				in.Set(pod("ns", "svc-7-1", fmt.Sprintf("10.200.%d.%d", (i/250)%250, i%250), sel, true))
			}
			reportCPU(b, start)
			if _, ok := m.ClusterLoadAssignments.Get("outbound|80||svc-7.ns.svc.cluster.local"); !ok {
				b.Fatal("CLA missing")
			}
		})
	}
}

// BenchmarkServiceChange measures one service change: its clusters,
// listeners, routes and the shared sidecar route configuration.
func BenchmarkServiceChange(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("services=%d/pods=%d", sz.services, sz.services*sz.podsPer), func(b *testing.B) {
			g := krt.NewGraph()
			in := newTestInputs(g)
			populate(in, "ns", sz.services, sz.podsPer)
			Build(g, in.Inputs())
			sel := map[string]string{"app": "svc-7"}
			b.ReportAllocs()
			start := cpuTime()
			i := 0
			for b.Loop() {
				i++
				in.Set(service("ns", "svc-7", sel, svcPort("http", 80, 8080), svcPort("grpc", 9090, int(9000+i%2))))
			}
			reportCPU(b, start)
		})
	}
}
