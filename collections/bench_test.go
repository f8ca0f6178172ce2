package collections

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// reportCPU reports the CPU time per operation since start, which unlike
// ns/op does not grow when other processes compete for the cores.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(metric.CPU()-start)/float64(b.N), "cpu-ns/op")
}

var benchSizes = []struct{ services, podsPer int }{{100, 10}, {1000, 10}}

// BenchmarkBuild measures deriving the whole model from filled inputs:
// the start-up cost.
func BenchmarkBuild(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("services=%d/pods=%d", sz.services, sz.services*sz.podsPer), func(b *testing.B) {
			b.ReportAllocs()
			start := metric.CPU()
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

// benchChange measures change, applied once per iteration i, at every
// size of benchSizes, to a model built over populated inputs and extra.
// check, if not nil, then looks at the model.
func benchChange(b *testing.B, extra []any, change func(in sources.StaticInputs, i int), check func(*testing.B, *Model)) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("services=%d/pods=%d", sz.services, sz.services*sz.podsPer), func(b *testing.B) {
			g := krt.NewGraph()
			in := newTestInputs(g)
			populate(in, "ns", sz.services, sz.podsPer)
			in.Set(extra...)
			m := Build(g, in.Inputs())
			b.ReportAllocs()
			start := metric.CPU()
			i := 0
			for b.Loop() {
				i++
				change(in, i)
			}
			reportCPU(b, start)
			if check != nil {
				check(b, m)
			}
		})
	}
}

// BenchmarkPodChange measures one pod IP change propagated through a
// built model: its workload, endpoints and load assignments.
func BenchmarkPodChange(b *testing.B) {
	sel := map[string]string{"app": "svc-7"}
	benchChange(b, []any{splitRoute(90, 10)}, func(in sources.StaticInputs, i int) {
		in.Set(pod("ns", "svc-7-1", fmt.Sprintf("10.200.%d.%d", (i/250)%250, i%250), sel, true))
	}, func(b *testing.B, m *Model) {
		if _, ok := m.ClusterLoadAssignments.Get("outbound|80||svc-7.ns.svc.cluster.local"); !ok {
			b.Fatal("CLA missing")
		}
	})
}

// BenchmarkServiceChange measures one service change: its clusters,
// listeners, routes and the shared sidecar route configuration.
func BenchmarkServiceChange(b *testing.B) {
	sel := map[string]string{"app": "svc-7"}
	benchChange(b, nil, func(in sources.StaticInputs, i int) {
		in.Set(service("ns", "svc-7", sel, svcPort("http", 80, 8080), svcPort("grpc", 9090, int(9000+i%2))))
	}, nil)
}
