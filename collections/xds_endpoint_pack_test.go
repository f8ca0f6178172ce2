package collections

import (
	"bytes"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// buildCLA builds, as a proto, the load assignment packCLA serializes:
// what the packed bytes are checked against.
func buildCLA(e ServiceEndpoints, t clusterTraffic) *endpointv3.ClusterLoadAssignment {
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: e.Cluster}
	remotePriority := uint32(0)
	if t.preferLocal && slices.ContainsFunc(e.Endpoints, func(ep Endpoint) bool { return ep.Locality.Cluster == t.local }) {
		remotePriority = 1
	}
	var cur *endpointv3.LocalityLbEndpoints
	var curLoc Locality
	for _, ep := range e.Endpoints {
		if cur == nil || ep.Locality != curLoc {
			curLoc = ep.Locality
			cur = &endpointv3.LocalityLbEndpoints{Locality: xdsLocality(curLoc)}
			if curLoc.Cluster != t.local {
				cur.Priority = remotePriority
			}
			cla.Endpoints = append(cla.Endpoints, cur)
		}
		health := corev3.HealthStatus_HEALTHY
		if !ep.Healthy {
			health = corev3.HealthStatus_UNHEALTHY
		}
		cur.LbEndpoints = append(cur.LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: socketAddress(ep.IP, uint32(ep.Port)),
			}},
			HealthStatus: health,
		})
	}
	for _, l := range cla.Endpoints {
		l.LoadBalancingWeight = wrapperspb.UInt32(uint32(len(l.LbEndpoints)))
	}
	return cla
}

// xdsLocality is l as xDS has it (appendLocality).
func xdsLocality(l Locality) *corev3.Locality {
	sub := l.SubZone
	if l.Cluster != "" {
		sub += "@" + l.Cluster
	}
	return &corev3.Locality{Region: l.Region, Zone: l.Zone, SubZone: sub}
}

// packedCLA returns packCLA(e, t) decoded, failing t when its bytes or
// type URL are not those of marshalling buildCLA(e, t).
func packedCLA(t *testing.T, e ServiceEndpoints, traffic clusterTraffic) *endpointv3.ClusterLoadAssignment {
	t.Helper()
	got, want := packCLA(e, traffic), mustAny(buildCLA(e, traffic))
	if got.TypeUrl != want.TypeUrl || !bytes.Equal(got.Value, want.Value) {
		t.Errorf("%s: packed %s %x, marshalled %s %x", e.Cluster, got.TypeUrl, got.Value, want.TypeUrl, want.Value)
	}
	var cla endpointv3.ClusterLoadAssignment
	if err := got.UnmarshalTo(&cla); err != nil {
		t.Fatalf("%s: packed bytes do not decode: %v", e.Cluster, err)
	}
	return &cla
}

// TestPackCLAAsMarshal checks that load assignments serialized field by
// field have the bytes that marshalling them as protos gives: no
// endpoints, unhealthy ones, IPv6, port 0, empty and full localities,
// remote clusters with and without a preferred local one.
func TestPackCLAAsMarshal(t *testing.T) {
	full := Locality{Region: "r", Zone: "z", SubZone: "s"}
	eps := []Endpoint{
		{IP: "10.0.0.1", Port: 80, Healthy: true},
		{IP: "10.0.0.2", Port: 0, Healthy: false},
		{IP: "fd00::1", Port: 65535, Healthy: true, Locality: full},
		{IP: "10.1.0.1", Port: 8080, Healthy: true, Locality: Locality{Zone: "z", Cluster: "west"}},
		{IP: "10.2.0.1", Port: 8080, Healthy: false, Locality: Locality{Cluster: "home"}},
	}
	for _, tc := range []struct {
		name    string
		eps     []Endpoint
		traffic clusterTraffic
	}{
		{"none", nil, clusterTraffic{}},
		{"one", eps[:1], clusterTraffic{}},
		{"local localities", eps[:3], clusterTraffic{preferLocal: true}},
		{"clusters", eps, clusterTraffic{}},
		{"prefer local", eps, clusterTraffic{preferLocal: true}},
		{"prefer a named local cluster", eps, clusterTraffic{preferLocal: true, local: "home"}},
		{"prefer an absent local cluster", eps[3:4], clusterTraffic{preferLocal: true, local: "home"}},
	} {
		e := ServiceEndpoints{Cluster: "outbound|80||" + tc.name, Endpoints: dedupEndpoints(slices.Clone(tc.eps))}
		cla := packedCLA(t, e, tc.traffic)
		n := 0
		for _, l := range cla.GetEndpoints() {
			n += len(l.GetLbEndpoints())
		}
		if cla.GetClusterName() != e.Cluster || n != len(e.Endpoints) {
			t.Errorf("%s: decodes to %s with %d endpoints, want %d", tc.name, cla.GetClusterName(), n, len(e.Endpoints))
		}
	}
}
