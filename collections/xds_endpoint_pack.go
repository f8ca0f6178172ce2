package collections

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Load assignments are serialized field by field, as server listeners
// are (xds_server_listener_pack.go): a large mesh has a hundred thousand
// endpoints, and building each as four nested messages only to marshal
// and drop them is most of what the load assignments cost. The bytes are
// those that deterministically marshalling the same message, built as a
// proto, gives (TestPackCLAAsMarshal): fields in ascending number, zero scalars left
// out, set messages and oneof members always written, oneof members
// last.

// claTypeURL is the type URL of a packed ClusterLoadAssignment.
var claTypeURL = typeURLOf(&endpointv3.ClusterLoadAssignment{})

// typeURLOf returns the type URL an Any packing m has.
func typeURLOf(m proto.Message) string {
	return "type.googleapis.com/" + string(m.ProtoReflect().Descriptor().FullName())
}

// fieldNumber returns the number of the field called name of m.
func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// The numbers of the fields a load assignment sets, from the descriptors.
var (
	claClusterNameField   = fieldNumber(&endpointv3.ClusterLoadAssignment{}, "cluster_name")
	claEndpointsField     = fieldNumber(&endpointv3.ClusterLoadAssignment{}, "endpoints")
	localityLocalityField = fieldNumber(&endpointv3.LocalityLbEndpoints{}, "locality")
	localityLbField       = fieldNumber(&endpointv3.LocalityLbEndpoints{}, "lb_endpoints")
	localityWeightField   = fieldNumber(&endpointv3.LocalityLbEndpoints{}, "load_balancing_weight")
	localityPriorityField = fieldNumber(&endpointv3.LocalityLbEndpoints{}, "priority")
	regionField           = fieldNumber(&corev3.Locality{}, "region")
	zoneField             = fieldNumber(&corev3.Locality{}, "zone")
	subZoneField          = fieldNumber(&corev3.Locality{}, "sub_zone")
	lbEndpointField       = fieldNumber(&endpointv3.LbEndpoint{}, "endpoint")
	lbHealthField         = fieldNumber(&endpointv3.LbEndpoint{}, "health_status")
	endpointAddressField  = fieldNumber(&endpointv3.Endpoint{}, "address")
	addressSocketField    = fieldNumber(&corev3.Address{}, "socket_address")
	socketAddressField    = fieldNumber(&corev3.SocketAddress{}, "address")
	socketPortField       = fieldNumber(&corev3.SocketAddress{}, "port_value")
	uint32ValueField      = fieldNumber(&wrapperspb.UInt32Value{}, "value")
)

// packCLA returns the packed ClusterLoadAssignment of a service port.
// Endpoints are grouped by locality, each locality listed once (gRPC
// clients reject duplicates) with a weight equal to its number of
// endpoints (they ignore a locality of weight 0). Not-ready endpoints are
// listed as UNHEALTHY. With t.preferLocal, the local cluster's localities
// have priority 0 and the remote clusters' priority 1, or 0 when the
// local cluster has none (xDS priorities start at 0 with no gap). An
// endpoint's Stale flag changes nothing here: a remote's last known
// endpoints serve as they were until they leave the model.
func packCLA(e ServiceEndpoints, t clusterTraffic) *anypb.Any {
	remotePriority := uint64(0)
	if t.preferLocal && slices.ContainsFunc(e.Endpoints, func(ep Endpoint) bool { return ep.Locality.Cluster == t.local }) {
		remotePriority = 1
	}
	b := appendStringField(nil, claClusterNameField, e.Cluster)
	var group, scratch []byte
	for start := 0; start < len(e.Endpoints); {
		loc := e.Endpoints[start].Locality
		end := start + 1
		for end < len(e.Endpoints) && e.Endpoints[end].Locality == loc {
			end++
		}
		group = appendMessageField(group[:0], localityLocalityField, appendLocality(scratch[:0], loc))
		for _, ep := range e.Endpoints[start:end] {
			scratch = appendLbEndpoint(scratch[:0], ep)
			group = appendMessageField(group, localityLbField, scratch)
		}
		group = appendMessageField(group, localityWeightField, appendUint32Value(scratch[:0], uint64(end-start)))
		if loc.Cluster != t.local && remotePriority != 0 {
			group = protowire.AppendTag(group, localityPriorityField, protowire.VarintType)
			group = protowire.AppendVarint(group, remotePriority)
		}
		b = appendMessageField(b, claEndpointsField, group)
		start = end
	}
	return &anypb.Any{TypeUrl: claTypeURL, Value: b}
}

// appendLocality appends the fields of l as an xDS Locality. xDS
// localities have no cluster, so a named cluster's name is appended to
// the sub-zone ("subzone@cluster"): two clusters' endpoints in one zone
// stay two localities.
func appendLocality(b []byte, l Locality) []byte {
	sub := l.SubZone
	if l.Cluster != "" {
		sub += "@" + l.Cluster
	}
	b = appendStringField(b, regionField, l.Region)
	b = appendStringField(b, zoneField, l.Zone)
	return appendStringField(b, subZoneField, sub)
}

// appendLbEndpoint appends the fields of ep's LbEndpoint: its health and
// its address, in that order, since Go's marshalling writes a oneof
// member (the endpoint) after the plain fields. Its weight is left out:
// every endpoint weighs the same, and an unset weight is 1 to Envoy and
// every gRPC client (which reject only an explicit 0), so writing it
// would cost four bytes and a message to decode per endpoint.
func appendLbEndpoint(b []byte, ep Endpoint) []byte {
	health := corev3.HealthStatus_HEALTHY
	if !ep.Healthy {
		health = corev3.HealthStatus_UNHEALTHY
	}
	b = protowire.AppendTag(b, lbHealthField, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(health))
	var buf [80]byte
	addr := appendAddress(buf[:0], ep.IP, uint32(ep.Port))
	// Endpoint{address: addr}, written in place.
	b = protowire.AppendTag(b, lbEndpointField, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(protowire.SizeTag(endpointAddressField)+protowire.SizeBytes(len(addr))))
	return appendMessageField(b, endpointAddressField, addr)
}

// appendAddress appends the fields of socketAddress(ip, port): its
// socket address, whose protocol is TCP, the zero value, and so left out,
// and whose port is a oneof member, written even when 0.
func appendAddress(b []byte, ip string, port uint32) []byte {
	var buf [64]byte
	sock := appendStringField(buf[:0], socketAddressField, ip)
	sock = protowire.AppendTag(sock, socketPortField, protowire.VarintType)
	sock = protowire.AppendVarint(sock, uint64(port))
	return appendMessageField(b, addressSocketField, sock)
}

// appendUint32Value appends the fields of wrapperspb.UInt32(v).
func appendUint32Value(b []byte, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, uint32ValueField, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendStringField appends s as field num, unless it is empty (a proto3
// string without presence).
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
