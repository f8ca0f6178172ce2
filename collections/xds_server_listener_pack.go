package collections

import (
	"sync"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// Server listeners are serialized field by field rather than built as
// protos and marshalled: there is one per workload address and port, a
// hundred thousand in a large mesh, and all but their name and address
// is the filter chain that every workload without RBAC shares on a port
// and mode. The bytes are those deterministic marshalling gives
// (TestPackServerListenerAsMarshal): fields in ascending number.

// listenerTypeURL is the type URL of a packed Listener.
const listenerTypeURL = "type.googleapis.com/envoy.config.listener.v3.Listener"

// The Listener fields a server listener sets, from the descriptor.
var (
	listenerFields         = (*listenerv3.Listener)(nil).ProtoReflect().Descriptor().Fields()
	listenerNameField      = listenerFields.ByName("name").Number()
	listenerAddressField   = listenerFields.ByName("address").Number()
	listenerChainsField    = listenerFields.ByName("filter_chains").Number()
	listenerDirectionField = listenerFields.ByName("traffic_direction").Number()
)

// serverChainKey names a shared server filter chain: port and mode.
type serverChainKey struct {
	port int32
	mode MTLSMode
}

// plainServerChains holds the serialized filter chains of the server
// listeners without RBAC filters, per serverChainKey. A stored value is
// never modified.
var plainServerChains sync.Map // serverChainKey → []byte

// serverChain returns the serialized filter chain of a server listener
// on port (buildServerChain), shared when rbac adds no filter.
func serverChain(port int32, mode MTLSMode, rbac WorkloadRBAC) []byte {
	if len(rbac.Deny) > 0 || rbac.HasAllow {
		return mustMarshal(buildServerChain(port, mode, rbac))
	}
	key := serverChainKey{port: port, mode: mode}
	if b, ok := plainServerChains.Load(key); ok {
		return b.([]byte)
	}
	b, _ := plainServerChains.LoadOrStore(key, mustMarshal(buildServerChain(port, mode, rbac)))
	return b.([]byte)
}

// packServerListener returns the packed listener a gRPC xDS server on
// ip:port asks for, named name, with the serialized filter chain chain.
func packServerListener(name, ip string, port int32, chain []byte) *anypb.Any {
	var buf [80]byte
	addr := appendAddress(buf[:0], ip, uint32(port))
	b := make([]byte, 0, len(name)+len(addr)+len(chain)+16)
	b = protowire.AppendTag(b, listenerNameField, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = appendMessageField(b, listenerAddressField, addr)
	b = appendMessageField(b, listenerChainsField, chain)
	b = protowire.AppendTag(b, listenerDirectionField, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(corev3.TrafficDirection_INBOUND))
	return &anypb.Any{TypeUrl: listenerTypeURL, Value: b}
}

// appendMessageField appends the serialized message m as field num.
func appendMessageField(b []byte, num protoreflect.FieldNumber, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}
