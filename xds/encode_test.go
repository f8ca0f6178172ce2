package xds

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// encodeCases are responses of every shape: empty, small resources
// copied into the head, large ones referenced, a head large enough to be
// pooled, removed names (one of them empty).
func encodeCases(t *testing.T) map[string]update {
	res := func(name string, size int) *resource {
		r, err := newResource(EndpointType, name, &endpointv3.ClusterLoadAssignment{ClusterName: name + strings.Repeat("x", size)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var many []*resource
	for i := range 300 {
		many = append(many, res(fmt.Sprintf("c-%d", i), i*7%2000))
	}
	return map[string]update{
		"empty":       {typeURL: EndpointType, nonce: "1"},
		"no version":  {typeURL: EndpointType, nonce: "2", resources: []*resource{res("a", 10)}},
		"small":       {typeURL: EndpointType, version: "v1", nonce: "3", resources: []*resource{res("a", 10), res("b", 100)}},
		"large":       {typeURL: EndpointType, version: "v2", nonce: "4", resources: []*resource{res("big", 5000), res("a", 1)}},
		"many":        {typeURL: EndpointType, version: "v3", nonce: "5", resources: many},
		"removed":     {typeURL: EndpointType, version: "v4", nonce: "6", removed: []string{"x", "", "y"}},
		"at the edge": {typeURL: EndpointType, version: "v5", nonce: "7", resources: []*resource{res("e", inlineValue-len("e")-4), res("f", inlineValue)}},
	}
}

// marshaled returns u marshaled as the proto message it stands for.
func marshaled(t *testing.T, kind StreamKind, u update) []byte {
	var msg proto.Message
	if kind == Delta {
		d := &discovery.DeltaDiscoveryResponse{SystemVersionInfo: u.version, TypeUrl: u.typeURL, Nonce: u.nonce, RemovedResources: u.removed}
		for _, r := range u.resources {
			d.Resources = append(d.Resources, &discovery.Resource{Name: r.name, Version: r.version, Resource: r.any})
		}
		msg = d
	} else {
		s := &discovery.DiscoveryResponse{VersionInfo: u.version, TypeUrl: u.typeURL, Nonce: u.nonce}
		for _, r := range u.resources {
			s.Resources = append(s.Resources, r.any)
		}
		msg = s
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncodeIsMarshal checks that every response encodes to the bytes
// marshaling its message gives, and that it references, rather than
// copies, the resources' large values.
func TestEncodeIsMarshal(t *testing.T) {
	for name, u := range encodeCases(t) {
		for _, kind := range []StreamKind{SotW, Delta} {
			if kind == SotW && len(u.removed) > 0 {
				continue
			}
			bufs, err := (&outgoing{kind: kind, u: &u}).encode()
			if err != nil {
				t.Fatalf("%s %s: %v", name, kind, err)
			}
			if got, want := bufs.Materialize(), marshaled(t, kind, u); !bytes.Equal(got, want) {
				t.Errorf("%s %s: encoded %d bytes, differ from the %d marshaled", name, kind, len(got), len(want))
			}
			for _, r := range u.resources {
				if v := r.any.Value; len(v) >= inlineValue && !referenced(bufs, v) {
					t.Errorf("%s %s: %s's %d bytes were copied", name, kind, r.name, len(v))
				}
			}
			bufs.Free()
		}
	}
}

// referenced reports whether one of bufs is v itself.
func referenced(bufs mem.BufferSlice, v []byte) bool {
	for _, b := range bufs {
		if d := b.ReadOnlyData(); len(d) == len(v) && &d[0] == &v[0] {
			return true
		}
	}
	return false
}

// TestEncodeDecodes checks a response through the proto decoder: what a
// client reads.
func TestEncodeDecodes(t *testing.T) {
	u := encodeCases(t)["large"]
	bufs, err := (&outgoing{kind: Delta, u: &u}).encode()
	if err != nil {
		t.Fatal(err)
	}
	var got discovery.DeltaDiscoveryResponse
	if err := proto.Unmarshal(bufs.Materialize(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Nonce != "4" || got.SystemVersionInfo != "v2" || len(got.Resources) != 2 || got.Resources[0].Name != "big" ||
		got.Resources[0].Version != u.resources[0].version || !proto.Equal(got.Resources[0].Resource, &anypb.Any{TypeUrl: EndpointType, Value: u.resources[0].any.Value}) {
		t.Fatalf("decoded %v", &got)
	}
}
