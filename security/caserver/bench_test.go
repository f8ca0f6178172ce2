package caserver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	pb "istio.io/api/security/v1alpha1"

	"github.com/meshd/meshd/security"
)

// BenchmarkSign measures the authority alone: CSR checks and signing of
// a P-256 leaf by a P-256 root.
func BenchmarkSign(b *testing.B) {
	_, ca := newService(b)
	req := security.Request{CSR: []byte(csrPEM(b, ecKey(b))), ID: mustID(b)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ca.Sign(req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "CSRs/s")
}

// BenchmarkCreateCertificate measures the gRPC API over TLS on loopback
// with callers×GOMAXPROCS concurrent calls on one connection, and reports
// the throughput and the 99th percentile latency of a call.
func BenchmarkCreateCertificate(b *testing.B) {
	for _, callers := range []int{1, 4, 16} {
		b.Run("callers="+itoa(callers), func(b *testing.B) {
			s, _ := newService(b)
			client := pb.NewIstioCertificateServiceClient(serveTB(b, s))
			req := &pb.IstioCertificateRequest{Csr: csrPEM(b, ecKey(b))}
			ctx := withToken(context.Background(), "Bearer web-token")
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism(callers)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(p *testing.PB) {
				var mine []time.Duration
				for p.Next() {
					t := time.Now()
					if _, err := client.CreateCertificate(ctx, req); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(t))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "CSRs/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
