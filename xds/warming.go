package xds

import (
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Warming. Envoy keeps an updated Cluster warming until it receives that
// cluster's ClusterLoadAssignment again, even an unchanged one, and an
// updated Listener until it receives its RouteConfiguration again; over
// Delta it does not even ask, since the names it subscribes to stay the
// same. So a response that changes a Cluster or a Listener the client
// holds is followed, in the same push (CDS before EDS, LDS before RDS),
// by the resources it waits for, resent whether or not they changed.
// gRPC clients do not warm, so WithWarmingFor can spare them the resends.

// dependentType is the type whose resources a resource of typeURL waits
// for after an update; "" for none.
func dependentType(typeURL string) string {
	switch typeURL {
	case ClusterType:
		return EndpointType
	case ListenerType:
		return RouteType
	}
	return ""
}

// warmsOn returns the names of the resources the serialized resource raw
// of typeURL, once updated, waits for: an EDS cluster's load assignment,
// the RDS route configurations of a listener's HTTP connection managers.
// It reads them from the bytes, as unmarshaling would, without decoding
// the rest: the server keeps resources only serialized. Malformed bytes
// wait for nothing.
func warmsOn(typeURL string, raw []byte) []string {
	switch typeURL {
	case ClusterType:
		return clusterLoadAssignment(raw)
	case ListenerType:
		return listenerRoutes(raw)
	}
	return nil
}

// The field numbers warmsOn reads, from the descriptors.
var (
	clusterFields      = (*clusterv3.Cluster)(nil).ProtoReflect().Descriptor().Fields()
	clusterNameField   = clusterFields.ByName("name").Number()
	clusterTypeField   = clusterFields.ByName("type").Number()
	clusterTypeOneof   = clusterFields.ByName("type").ContainingOneof().Fields()
	clusterEDSField    = clusterFields.ByName("eds_cluster_config").Number()
	edsServiceField    = (*clusterv3.Cluster_EdsClusterConfig)(nil).ProtoReflect().Descriptor().Fields().ByName("service_name").Number()
	listenerFields     = (*listenerv3.Listener)(nil).ProtoReflect().Descriptor().Fields()
	listenerAPIField   = listenerFields.ByName("api_listener").Number()
	listenerChainField = listenerFields.ByName("filter_chains").Number()
	listenerDefField   = listenerFields.ByName("default_filter_chain").Number()
	apiListenerField   = (*listenerv3.ApiListener)(nil).ProtoReflect().Descriptor().Fields().ByName("api_listener").Number()
	chainFiltersField  = (*listenerv3.FilterChain)(nil).ProtoReflect().Descriptor().Fields().ByName("filters").Number()
	filterTypedField   = (*listenerv3.Filter)(nil).ProtoReflect().Descriptor().Fields().ByName("typed_config").Number()
	filterConfigOneof  = (*listenerv3.Filter)(nil).ProtoReflect().Descriptor().Fields().ByName("typed_config").ContainingOneof().Fields()
	hcmName            = (*hcmv3.HttpConnectionManager)(nil).ProtoReflect().Descriptor().FullName()
)

// clusterLoadAssignment returns, for the serialized Cluster c of type
// EDS, the name of its load assignment: eds_cluster_config.service_name,
// or else the cluster's name.
func clusterLoadAssignment(c []byte) []string {
	eds := false
	var name, edsConfig []byte
	ok := eachField(c, func(num protowire.Number, typ protowire.Type, v []byte) {
		switch {
		case num == clusterTypeField && typ == protowire.VarintType:
			t, _ := protowire.ConsumeVarint(v)
			eds = clusterv3.Cluster_DiscoveryType(t) == clusterv3.Cluster_EDS
		case clusterTypeOneof.ByNumber(num) != nil:
			eds = false
		case num == clusterNameField && typ == protowire.BytesType:
			name = bytesValue(v)
		case num == clusterEDSField && typ == protowire.BytesType:
			edsConfig = append(edsConfig, bytesValue(v)...) // occurrences merge
		}
	})
	if !ok || !eds {
		return nil
	}
	service, ok := fieldBytes(edsConfig, edsServiceField)
	if !ok {
		return nil
	}
	if len(service) > 0 {
		return []string{string(service)}
	}
	return []string{string(name)}
}

// listenerRoutes returns the RDS route names of the serialized Listener
// l's API listener and filter chains, the default chain last.
func listenerRoutes(l []byte) []string {
	var api, def []byte
	var chains [][]byte
	if !eachField(l, func(num protowire.Number, typ protowire.Type, v []byte) {
		if typ != protowire.BytesType {
			return
		}
		switch num {
		case listenerAPIField:
			api = append(api, bytesValue(v)...)
		case listenerChainField:
			chains = append(chains, bytesValue(v))
		case listenerDefField:
			def = append(def, bytesValue(v)...)
		}
	}) {
		return nil
	}
	var out []string
	add := func(packed []byte) {
		if hcm, ok := packedHCM(packed); ok {
			if n := rdsRouteName(hcm); n != "" {
				out = append(out, n)
			}
		}
	}
	if api != nil {
		add(mergedField(api, apiListenerField, nil))
	}
	if def != nil {
		chains = append(chains, def)
	}
	for _, fc := range chains {
		eachField(fc, func(num protowire.Number, typ protowire.Type, v []byte) {
			if num == chainFiltersField && typ == protowire.BytesType {
				if tc := mergedField(bytesValue(v), filterTypedField, filterConfigOneof); tc != nil {
					add(tc)
				}
			}
		})
	}
	return out
}

// packedHCM returns the value of the serialized Any a if it holds an
// HttpConnectionManager, as anypb.Any.MessageIs tells.
func packedHCM(a []byte) ([]byte, bool) {
	url, ok := fieldBytes(a, anyTypeField)
	if !ok {
		return nil, false
	}
	u := string(url)
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		u = u[i+1:]
	}
	if protoreflect.FullName(u) != hcmName {
		return nil, false
	}
	v, ok := fieldBytes(a, anyValueField)
	return v, ok
}

// eachField calls f with every field of the serialized message b: its
// number, wire type and encoded value. It reports false, having stopped,
// for malformed bytes.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, value []byte)) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		f(num, typ, b[n:n+m])
		b = b[n+m:]
	}
	return true
}

// bytesValue returns the bytes of an encoded length-delimited value that
// eachField passed on.
func bytesValue(v []byte) []byte {
	b, _ := protowire.ConsumeBytes(v)
	return b
}

// mergedField returns the singular message field num of the serialized
// message b as a decoder sees it: its occurrences concatenated, which
// merges them, since the last member of its oneof (nil: none) set. nil
// if absent or malformed.
func mergedField(b []byte, num protowire.Number, oneof protoreflect.FieldDescriptors) []byte {
	var out []byte
	ok := eachField(b, func(got protowire.Number, typ protowire.Type, v []byte) {
		switch {
		case got == num && typ == protowire.BytesType:
			out = append(out, bytesValue(v)...)
		case oneof != nil && oneof.ByNumber(got) != nil:
			out = nil // another member of the oneof replaced it
		}
	})
	if !ok {
		return nil
	}
	return out
}

// The field numbers rdsRouteName reads, from the descriptors.
var (
	hcmFields     = (*hcmv3.HttpConnectionManager)(nil).ProtoReflect().Descriptor().Fields()
	hcmRDSField   = hcmFields.ByName("rds").Number()
	hcmRouteOneof = hcmFields.ByName("rds").ContainingOneof().Fields()
	rdsNameField  = (*hcmv3.Rds)(nil).ProtoReflect().Descriptor().Fields().ByName("route_config_name").Number()
)

// rdsRouteName returns rds.route_config_name of the serialized
// HttpConnectionManager hcm, as hcm.GetRds().GetRouteConfigName() would
// after unmarshaling it, without decoding the rest: thousands of
// listeners are built at once, and this is all warming needs of them.
// Malformed bytes have none.
func rdsRouteName(hcm []byte) string {
	var name []byte
	inRDS := false // the route specifier seen last is rds
	for len(hcm) > 0 {
		num, typ, n := protowire.ConsumeTag(hcm)
		if n < 0 {
			return ""
		}
		m := protowire.ConsumeFieldValue(num, typ, hcm[n:])
		if m < 0 {
			return ""
		}
		switch {
		case num == hcmRDSField && typ == protowire.BytesType:
			if !inRDS {
				name = nil // another member of the oneof came between
			}
			inRDS = true
			v, _ := protowire.ConsumeBytes(hcm[n:])
			if got, ok := fieldBytes(v, rdsNameField); !ok {
				return ""
			} else if got != nil {
				name = got
			}
		case hcmRouteOneof.ByNumber(num) != nil:
			inRDS = false
		}
		hcm = hcm[n+m:]
	}
	if !inRDS {
		return ""
	}
	return string(name)
}

// fieldBytes returns the last value of the bytes field num of the
// serialized message b (nil if absent); ok is false for malformed bytes.
func fieldBytes(b []byte, num protowire.Number) (v []byte, ok bool) {
	for len(b) > 0 {
		got, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(got, typ, b[n:])
		if m < 0 {
			return nil, false
		}
		if got == num && typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(b[n:])
		}
		b = b[n+m:]
	}
	return v, true
}

// warm records, for the changed resources of a response of typeURL that
// the client held before at another version, the dependent names to
// resend in the same push.
func (s *session) warm(typeURL string, changed []*resource, before map[string]*resource) {
	dep := dependentType(typeURL)
	if dep == "" || s.types[dep] == nil || !s.warms {
		return
	}
	for _, r := range changed {
		if prev := before[r.name]; prev == nil || prev.version == r.version {
			continue // new to the client: it asks for what it waits for
		}
		s.addResend(dep, r.warms)
	}
}

// addResend records names of typeURL to send on the next flush even if
// the client holds their current version, and to name removed, on
// Delta, if they do not exist.
func (s *session) addResend(typeURL string, names []string) {
	if len(names) == 0 {
		return
	}
	if s.resend == nil {
		s.resend = map[string]map[string]struct{}{}
	}
	if s.resend[typeURL] == nil {
		s.resend[typeURL] = map[string]struct{}{}
	}
	for _, n := range names {
		s.resend[typeURL][n] = struct{}{}
	}
}

// WithWarmingFor sets the rule that tells, from the node of a stream's
// first request, whether its client warms updated Clusters and Listeners
// as Envoy does, and so is sent again, after such an update, the load
// assignments and route configurations they wait for (see Warming in the
// package doc). Other clients are sent only what changed. Default: every
// client is (it costs gRPC clients a resend per update); EnvoyNode tells
// Envoy apart.
func WithWarmingFor(warms func(*core.Node) bool) Option {
	return func(o *options) { o.warmingFor = warms }
}

// EnvoyNode reports whether n is Envoy's: Envoy names itself "envoy" in
// user_agent_name.
func EnvoyNode(n *core.Node) bool { return n.GetUserAgentName() == "envoy" }
