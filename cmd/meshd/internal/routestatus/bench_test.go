package routestatus

import (
	"fmt"
	"sync"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkTermStart measures what a new leader's first pass costs over
// routes whose status is already written, against the real API server:
// every route is compared, none written (writes/op must be 0); the floor
// is the queue's 50 ms coalescing delay. It also
// reports how fast the first term wrote them all (initial_writes/s), with
// the token bucket out of the way.
//
//	go test ./cmd/meshd/internal/routestatus/ -run '^$' -bench TermStart -benchtime 10x
func BenchmarkTermStart(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			f := newFixture(b, Options{QPS: 10000, Burst: 10000})
			f.createService("web", 80)
			createRoutes(b, f, n)
			start := time.Now()
			stop := f.run()
			f.waitStats("every route written", func(s Stats) bool { return s.Written >= uint64(n) })
			initial := float64(n) / time.Since(start).Seconds()
			stop()

			putsBefore := f.puts.Load()
			b.ResetTimer()
			for b.Loop() {
				before := f.w.Stats().Unchanged
				stop := f.run()
				for f.w.Stats().Unchanged-before < uint64(n) {
					time.Sleep(time.Millisecond)
				}
				b.StopTimer()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(f.puts.Load()-putsBefore)/float64(b.N), "writes/op")
			b.ReportMetric(initial, "initial_writes/s")
		})
	}
}

// createRoutes creates n routes to the Service web, 16 at a time.
func createRoutes(b *testing.B, f *fixture, n int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f.createHTTPRoute(f.httpRoute(fmt.Sprintf("r%d", i), []gatewayv1.ParentReference{serviceParent("web", 80)}, backend("web", 80)))
		})
	}
	wg.Wait()
}
