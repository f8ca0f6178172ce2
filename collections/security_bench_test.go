package collections

import (
	"fmt"
	"testing"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/sources"
	"google.golang.org/protobuf/proto"
	securityv1beta1 "istio.io/api/security/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// populateServers adds grpcServices services with one gRPC port and
// tcpServices with one TCP port, podsPer pods each: only the gRPC pods
// serve a server listener.
func populateServers(in sources.StaticInputs, grpcServices, tcpServices, podsPer int) {
	var svcs []*corev1.Service
	var pods []*corev1.Pod
	for i := range grpcServices + tcpServices {
		name := fmt.Sprintf("svc-%d", i)
		sel := map[string]string{"app": name}
		port := svcPort("grpc", 9090, 9090)
		if i >= grpcServices {
			port = svcPort("tcp", 5000, 5000)
		}
		svcs = append(svcs, service("ns", name, sel, port))
		for j := range podsPer {
			pods = append(pods, pod("ns", fmt.Sprintf("%s-%d", name, j), fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1), sel, true))
		}
	}
	set(in, svcs...)
	set(in, pods...)
}

// BenchmarkAuthorizationPolicyChange measures one change to one
// AuthorizationPolicy selecting one service's 10 pods, at 1,000 services,
// 10,000 pods and 1,000 server listeners: CPU, allocated bytes, server
// listeners changed and their serialized bytes per change.
func BenchmarkAuthorizationPolicyChange(b *testing.B) {
	s := newSecurityModel()
	populateServers(s.in, 100, 900, 10)
	if n := s.m.ServerListeners.Len(); n != 1000 {
		b.Fatalf("%d server listeners, want 1000", n)
	}
	before := counters(s.g)
	b.ReportAllocs()
	start := metric.CPU()
	i := 0
	for b.Loop() {
		i++
		s.in.Set(authzPolicy("ns", "p", "svc-7", securityv1beta1.AuthorizationPolicy_ALLOW,
			fromPrincipals(fmt.Sprintf("cluster.local/ns/ns/sa/caller-%d", i%2))))
	}
	reportCPU(b, start)
	d := diffCounters(before, counters(s.g))
	b.ReportMetric(float64(d["ServerListeners"][0])/float64(b.N), "workloads-recomputed/op")
	b.ReportMetric(float64(d["ServerListeners"][1])/float64(b.N), "listeners-changed/op")
	size := 0
	for j := range 10 {
		l, _ := s.m.ServerListeners.Get(ServerListenerName(fmt.Sprintf("10.0.7.%d", j+1), 9090))
		size += proto.Size(l.Message())
	}
	b.ReportMetric(float64(size)*float64(d["ServerListeners"][1])/float64(b.N)/10, "listener-bytes/op")
}
