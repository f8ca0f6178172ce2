package xds_test

import (
	"fmt"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/xdstest"
)

// BenchmarkChange measures one load assignment change among many, from the
// write to every subscribed stream having received it: the cost should
// follow the streams that want the change, not the number of resources.
// The clients ACK every response, as proxies do: a stream whose proxy has
// not answered its last push holds the next one (pushHold), so without
// the ACKs every change would wait for the hold's cap.
func BenchmarkChange(b *testing.B) {
	for _, streams := range []int{10, 100} {
		for _, resources := range []int{100, 1000} {
			b.Run(fmt.Sprintf("streams=%d/resources=%d", streams, resources), func(b *testing.B) {
				f := newFixture(b)
				names := make([]string, resources)
				for i := range names {
					names[i] = fmt.Sprintf("c-%d", i)
					f.eds.Set(cla(names[i], "10.0.0.1:80"))
				}
				cc := dial(b, f.addr)
				clients := make([]*xdstest.SotW, streams)
				for i := range clients {
					clients[i] = xdstest.NewSotW(b, cc, &corev3.Node{Id: fmt.Sprintf("node-%d", i)})
					clients[i].Send(&discovery.DiscoveryRequest{TypeUrl: xds.EndpointType, ResourceNames: names})
				}
				for _, c := range clients {
					for got := 0; got < resources; {
						r := c.Recv()
						got += len(r.Resources)
						c.Ack(r, names...)
					}
				}
				before := f.srv.Stats()
				start := metric.CPU()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					addr := fmt.Sprintf("10.1.%d.%d", (i>>8)&255, i&255)
					f.eds.Set(cla("c-7", addr+":80"))
					for _, c := range clients {
						for {
							r := c.Recv()
							c.Ack(r, names...)
							if got := claOf(b, r.Resources, "c-7"); got != nil &&
								got.Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress().Address == addr {
								break
							}
						}
					}
				}
				after := f.srv.Stats()
				b.ReportMetric(float64(metric.CPU()-start)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(after.BytesSent["eds"]-before.BytesSent["eds"])/float64(b.N), "resource-bytes/op")
			})
		}
	}
}
