package xds

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// BenchmarkWarmingResend measures what an update of every cluster costs
// one SotW stream subscribed to every cluster and load assignment (n
// clusters of 10 endpoints each), with the warming resend (warms=true:
// every load assignment is sent again, as Envoy needs) and without (what
// WithWarmingFor spares a gRPC client): the flush's time, and the bytes
// and resources it sends.
func BenchmarkWarmingResend(b *testing.B) {
	for _, warms := range []bool{false, true} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("warms=%v/n=%d", warms, n), func(b *testing.B) {
				benchWarmingResend(b, n, warms)
			})
		}
	}
}

func benchWarmingResend(b *testing.B, n int, warms bool) {
	revs := [2]map[string]*resource{benchClusters(b, n, 1), benchClusters(b, n, 2)}
	c := newCache([]string{ClusterType, EndpointType}, nil)
	c.types[ClusterType] = revs[0]
	all := map[string]struct{}{}
	names := make([]string, 0, n)
	for name := range revs[0] {
		c.types[EndpointType][name] = benchResource(b, EndpointType, name, benchAssignment(name, 10))
		all[name] = struct{}{}
		names = append(names, name)
	}
	s := newSession(&protocol{typeURLs: []string{ClusterType, EndpointType}}, SotW)
	s.warms = warms
	now := time.Now()
	step := func(req *discovery.DiscoveryRequest) (bytes, resources int) {
		c.read(func(v view) {
			if req != nil {
				if err := s.sotw(req, v, now); err != nil {
					b.Fatal(err)
				}
			} else {
				s.changed(map[string]map[string]struct{}{ClusterType: all}, v)
			}
			for _, u := range s.flush(v, now) {
				for _, r := range u.resources {
					bytes += r.size()
				}
				resources += len(u.resources)
				s.sotw(&discovery.DiscoveryRequest{TypeUrl: u.typeURL, VersionInfo: u.version, ResponseNonce: u.nonce, ResourceNames: benchNames(u.typeURL, names)}, v, now)
			}
		})
		return bytes, resources
	}
	step(&discovery.DiscoveryRequest{TypeUrl: ClusterType})
	step(&discovery.DiscoveryRequest{TypeUrl: EndpointType, ResourceNames: names})
	var bytes, resources, i int
	b.ReportAllocs()
	for b.Loop() {
		i++
		c.types[ClusterType] = revs[i%2]
		nb, nr := step(nil)
		bytes, resources = bytes+nb, resources+nr
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/update")
	b.ReportMetric(float64(resources)/float64(b.N), "resources/update")
}

// benchNames is what a SotW answer of typeURL repeats: the load
// assignments' names, none for the wildcard.
func benchNames(typeURL string, names []string) []string {
	if typeURL == EndpointType {
		return names
	}
	return nil
}

// benchClusters returns n EDS clusters c-0 … c-(n-1), all at rev.
func benchClusters(b *testing.B, n int, rev int64) map[string]*resource {
	out := make(map[string]*resource, n)
	for i := range n {
		name := "c-" + strconv.Itoa(i)
		out[name] = benchResource(b, ClusterType, name, &clusterv3.Cluster{Name: name,
			ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
			EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{ServiceName: name},
			ConnectTimeout:       durationpb.New(time.Duration(rev) * time.Second)})
	}
	return out
}

// benchAssignment is a load assignment of k endpoints.
func benchAssignment(name string, k int) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{{}}}
	for j := range k {
		cla.Endpoints[0].LbEndpoints = append(cla.Endpoints[0].LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address: "10.0.0." + strconv.Itoa(j), PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 8080}}}},
			}}})
	}
	return cla
}

func benchResource(b *testing.B, typeURL, name string, msg proto.Message) *resource {
	r, err := newResource(typeURL, name, msg)
	if err != nil {
		b.Fatal(err)
	}
	return r
}
