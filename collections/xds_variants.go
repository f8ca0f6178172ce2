//lint:file-ignore SA1019 the deprecated fields are what old clients read.

package collections

import (
	"strconv"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/meshd/meshd/krt"
)

// VariantGRPCLegacy is the client variant (xds.WithClientVariants) of
// gRPC C-core releases that predate two changes in the route API, as
// gRPC C-core 1.51 (Debian 12's python3-grpcio) shows:
//
//   - a HeaderMatcher's string_match, which replaced exact_match,
//     safe_regex_match and their siblings, is rejected ("Invalid route
//     header matcher specified");
//   - a WeightedCluster's weights must add up to its total_weight, which
//     defaults to 100, though Envoy deprecated the field.
//
// Its route configurations say the same with the older fields, which
// every C-core release accepts.
const VariantGRPCLegacy = "grpc-legacy"

// VariantGRPC is the client variant of gRPC clients (user_agent_name
// "gRPC ...": grpc-go, grpc-java, grpc-js, C-core since legacyCoreBelow).
// Its clusters leave out the HTTP/2 protocol options that tell Envoy how
// to speak upstream and that gRPC clients ignore: a tenth of what a
// connecting wildcard client is sent, decoded for nothing.
// VariantGRPCLegacy clients get those clusters too.
const VariantGRPC = "grpc"

// legacyCoreBelow is the first C-core version (the core library's, which
// C-core wrappers report in user_agent_version as "C-core 29.0.0 ...";
// 33 is gRPC 1.55) served the base route configurations. Earlier ones get
// VariantGRPCLegacy: conservatively, since the older fields work on all.
const legacyCoreBelow = 33

// ClientVariant tells a proxy's client variant from its node's user
// agent: VariantGRPC for a gRPC client (user_agent_name "gRPC ..."),
// VariantGRPCLegacy for an older C-core one (user_agent_name
// "gRPC C-core ...", user_agent_version "C-core MAJOR.MINOR.PATCH ...").
// Every other client — Envoy, or one naming no user agent — gets the
// base resources (""), which serve every client.
func ClientVariant(n *corev3.Node) string {
	name := n.GetUserAgentName()
	if !strings.HasPrefix(name, "gRPC ") {
		return ""
	}
	if !strings.HasPrefix(name, "gRPC C-core") {
		return VariantGRPC
	}
	version, ok := strings.CutPrefix(n.GetUserAgentVersion(), "C-core ")
	if !ok {
		return VariantGRPC
	}
	major, _, _ := strings.Cut(version, ".")
	if v, err := strconv.Atoi(major); err == nil && v < legacyCoreBelow {
		return VariantGRPCLegacy
	}
	return VariantGRPC
}

// GRPCClusterForm is the VariantGRPC form of cluster r, for
// xds.NewPackedSource: r without its protocol options; a nil Any when r
// has none, as gRPC clients then get the base. The model's clusters
// carry the options last (packCluster), so the form is a prefix of r's
// bytes and shares them; should anything follow the options, the form
// is marshaled anew.
func GRPCClusterForm(r Resource[*clusterv3.Cluster]) (string, *anypb.Any) {
	b := r.Packed.GetValue()
	cut, onlyOptionsAfter := protocolOptionsAt(b)
	switch {
	case cut == len(b):
		return r.Name, nil
	case onlyOptionsAfter:
		return r.Name, &anypb.Any{TypeUrl: r.Packed.TypeUrl, Value: b[:cut:cut]}
	}
	c := r.Message()
	c.TypedExtensionProtocolOptions = nil
	return r.Name, mustAny(c)
}

// clusterProtocolOptionsField is the number of Cluster's
// typed_extension_protocol_options.
var clusterProtocolOptionsField = fieldNumber(&clusterv3.Cluster{}, "typed_extension_protocol_options")

// protocolOptionsAt returns the offset of the first protocol options
// field of the serialized cluster b (len(b) if none, or if b does not
// parse), and whether every field from there on is one.
func protocolOptionsAt(b []byte) (cut int, onlyOptionsAfter bool) {
	cut, onlyOptionsAfter = len(b), true
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return len(b), true
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return len(b), true
		}
		switch {
		case num == clusterProtocolOptionsField && cut == len(b):
			cut = off
		case num != clusterProtocolOptionsField && cut < len(b):
			onlyOptionsAfter = false
		}
		off += n + m
	}
	return cut, onlyOptionsAfter
}

// newLegacyGRPCRoutes derives, from the port routes, the VariantGRPCLegacy
// form of the gRPC route configurations that need one; the others are the
// same for every client. A port without route entries has only the
// default route, which every client reads alike, and is spared building.
func newLegacyGRPCRoutes(g *krt.Graph, ports krt.Collection[PortRoutes]) krt.Collection[Resource[*routev3.RouteConfiguration]] {
	return krt.NewCollection(g, ports, func(_ krt.HandlerContext, p PortRoutes) *Resource[*routev3.RouteConfiguration] {
		if len(p.Entries) == 0 {
			return nil
		}
		legacy, changed := legacyRouteConfig(buildGRPCRouteConfig(p))
		if !changed {
			return nil
		}
		r := newResource(p.ListenerName(), legacy).exported(p.ExportTo)
		return &r
	}, krt.WithName("LegacyGRPCRouteConfigurations"))
}

// legacyRouteConfig returns rc in the older fields, and whether that
// differs from rc; rc itself is not changed.
func legacyRouteConfig(rc *routev3.RouteConfiguration) (*routev3.RouteConfiguration, bool) {
	out := proto.Clone(rc).(*routev3.RouteConfiguration)
	changed := false
	for _, vh := range out.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			for _, h := range r.GetMatch().GetHeaders() {
				changed = legacyHeaderMatcher(h) || changed
			}
			if wc := r.GetRoute().GetWeightedClusters(); wc != nil {
				changed = legacyTotalWeight(wc) || changed
			}
		}
	}
	return out, changed
}

// legacyHeaderMatcher rewrites h's string_match into the older field of
// the same meaning, and reports whether it did.
func legacyHeaderMatcher(h *routev3.HeaderMatcher) bool {
	sm := h.GetStringMatch()
	if sm == nil || sm.GetIgnoreCase() {
		return false // none, or no older field says it
	}
	switch p := sm.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_ExactMatch{ExactMatch: p.Exact}
	case *matcherv3.StringMatcher_Prefix:
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_PrefixMatch{PrefixMatch: p.Prefix}
	case *matcherv3.StringMatcher_Suffix:
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_SuffixMatch{SuffixMatch: p.Suffix}
	case *matcherv3.StringMatcher_Contains:
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_ContainsMatch{ContainsMatch: p.Contains}
	case *matcherv3.StringMatcher_SafeRegex:
		h.HeaderMatchSpecifier = &routev3.HeaderMatcher_SafeRegexMatch{SafeRegexMatch: p.SafeRegex}
	default:
		return false
	}
	return true
}

// legacyTotalWeight sets wc's total_weight to the sum of its weights.
func legacyTotalWeight(wc *routev3.WeightedCluster) bool {
	var sum uint32
	for _, c := range wc.GetClusters() {
		sum += c.GetWeight().GetValue()
	}
	wc.TotalWeight = wrapperspb.UInt32(sum)
	return true
}
