package xds

import (
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
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

// warmsOn returns the names of the resources msg, once updated, waits
// for: an EDS cluster's load assignment, the RDS route configurations of
// a listener's HTTP connection managers.
func warmsOn(msg proto.Message) []string {
	switch m := msg.(type) {
	case *clusterv3.Cluster:
		if m.GetType() != clusterv3.Cluster_EDS {
			return nil
		}
		if n := m.GetEdsClusterConfig().GetServiceName(); n != "" {
			return []string{n}
		}
		return []string{m.GetName()}
	case *listenerv3.Listener:
		return listenerRoutes(m)
	}
	return nil
}

// listenerRoutes returns the RDS route names of l's API listener and
// filter chains.
func listenerRoutes(l *listenerv3.Listener) []string {
	var out []string
	add := func(hcm []byte) {
		if n := rdsRouteName(hcm); n != "" {
			out = append(out, n)
		}
	}
	if a := l.GetApiListener().GetApiListener(); a != nil && a.MessageIs((*hcmv3.HttpConnectionManager)(nil)) {
		add(a.GetValue())
	}
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains[:len(chains):len(chains)], dc)
	}
	for _, fc := range chains {
		for _, f := range fc.GetFilters() {
			if tc := f.GetTypedConfig(); tc != nil && tc.MessageIs((*hcmv3.HttpConnectionManager)(nil)) {
				add(tc.GetValue())
			}
		}
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
