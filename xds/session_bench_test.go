package xds

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// benchCache returns a cache of n clusters, c-0 … c-(n-1).
func benchCache(b *testing.B, n int) *cache {
	b.Helper()
	c := newCache([]string{ClusterType}, nil)
	for i := range n {
		name := "c-" + strconv.Itoa(i)
		r, err := newResource(ClusterType, name, scriptMessage(ClusterType, name, ""))
		if err != nil {
			b.Fatal(err)
		}
		c.types[ClusterType][name] = r
	}
	return c
}

// BenchmarkSessionFirstResponse measures the pure protocol work of a
// wildcard Cluster subscription's first request and response, without
// gRPC: what every stream costs the server on connecting.
func BenchmarkSessionFirstResponse(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c := benchCache(b, n)
			p := &protocol{typeURLs: []string{ClusterType}}
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				for _, kind := range []StreamKind{SotW, Delta} {
					s := newSession(p, kind)
					c.read(func(v view) {
						var err error
						if kind == SotW {
							err = s.sotw(&discovery.DiscoveryRequest{TypeUrl: ClusterType}, v, now)
						} else {
							err = s.delta(&discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType}, v, now)
						}
						if err != nil || len(s.flush(v, now)) != 1 {
							b.Fatal("no first response", err)
						}
					})
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/stream")
		})
	}
}

// BenchmarkSessionResume measures a Delta stream reconnecting with every
// version current (initial_resource_versions): nothing is sent.
func BenchmarkSessionResume(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c := benchCache(b, n)
			versions := map[string]string{}
			for name, r := range c.types[ClusterType] {
				versions[name] = r.version
			}
			p := &protocol{typeURLs: []string{ClusterType}}
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				s := newSession(p, Delta)
				c.read(func(v view) {
					req := &discovery.DeltaDiscoveryRequest{TypeUrl: ClusterType, InitialResourceVersions: versions}
					if err := s.delta(req, v, now); err != nil || len(s.flush(v, now)) != 0 {
						b.Fatal("resume sent a response", err)
					}
				})
			}
		})
	}
}
