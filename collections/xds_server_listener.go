package collections

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/meshd/meshd/krt"
)

// ServerListenerNamePrefix is what gRPC's xDS-enabled servers put before
// their listening address ("IP:PORT") to name the Listener they ask for,
// with server_listener_resource_name_template
// "grpc/server?xds.resource.listening_address=%s" in their bootstrap.
const ServerListenerNamePrefix = "grpc/server?xds.resource.listening_address="

// ServerListenerName returns the name of the server listener of a
// workload address and port.
func ServerListenerName(ip string, port int32) string {
	return ServerListenerNamePrefix + net.JoinHostPort(ip, strconv.Itoa(int(port)))
}

// rbacFilterName prefixes the names of the RBAC HTTP filters.
const rbacFilterName = "envoy.filters.http.rbac"

// buildServerChain returns the filter chain of the listener a gRPC xDS
// server on port asks for: over mutual TLS with a client certificate
// required when mode is STRICT and in plaintext otherwise, its HCM routes
// every RPC to the server itself after the RBAC filters.
//
// PERMISSIVE is served as plaintext: grpc-go matches filter chains only
// on addresses and ports (a transport_protocol other than "raw_buffer"
// drops the chain), so a gRPC server cannot tell a TLS client from a
// plaintext one on one port. Clients of the port are told plaintext too
// (ClusterSecurity), so the mesh stays reachable, and plaintext callers
// carry no principal, which principal rules then never match.
func buildServerChain(port int32, mode MTLSMode, rbac WorkloadRBAC) *listenerv3.FilterChain {
	key := inboundKey{port: port, tls: mode == MTLSStrict}
	chain := &listenerv3.FilterChain{
		Name: "inbound|" + strconv.Itoa(int(port)),
		Filters: []*listenerv3.Filter{{
			Name:       hcmFilterName,
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: inboundHCM(key, rbac)},
		}},
	}
	if key.tls {
		chain.TransportSocket = sharedDownstreamTLS()
	}
	return chain
}

// plainInboundHCMs holds, per port and TLS mode, the packed HCM of the
// server listeners without RBAC filters, which every workload serving the
// port with no policy shares: a hundred thousand workloads would otherwise
// each marshal, and hold, a copy of the same bytes. A stored value is
// never modified.
var plainInboundHCMs sync.Map // inboundKey → *anyMsg

// inboundKey is what a server listener's HCM depends on besides RBAC.
type inboundKey struct {
	port int32
	// tls: the chain is mutual TLS (STRICT). The HCM says so in its
	// stat_prefix, which gRPC ignores, so that a chain changing only its
	// transport socket also changes its HCM bytes: @grpc/grpc-js-xds
	// (1.14.1) compares a new listener with its current one filter by
	// filter first and, when those bytes are equal, reads the transport
	// socket of the current chain without checking it has one. Plaintext
	// to mTLS then crashes the server (TypeError), and mTLS to plaintext
	// is taken for no change.
	tls bool
}

// statPrefix is the HCM's stat_prefix of k.
func (k inboundKey) statPrefix() string {
	if k.tls {
		return "inbound_mtls_" + strconv.Itoa(int(k.port))
	}
	return "inbound_" + strconv.Itoa(int(k.port))
}

// sharedDownstreamTLS is the transport socket every STRICT server filter
// chain shares; it is never modified.
var sharedDownstreamTLS = sync.OnceValue(downstreamTLS)

// inboundHCM returns the packed HCM of a server listener of k: the
// workload's RBAC filters, then the router; every RPC is routed to the
// server itself.
func inboundHCM(k inboundKey, rbac WorkloadRBAC) *anyMsg {
	filters := rbacFilters(rbac)
	if len(filters) > 0 {
		return mustAny(buildInboundHCM(k, filters))
	}
	if a, ok := plainInboundHCMs.Load(k); ok {
		return a.(*anyMsg)
	}
	a, _ := plainInboundHCMs.LoadOrStore(k, mustAny(buildInboundHCM(k, nil)))
	return a.(*anyMsg)
}

// buildInboundHCM returns the HCM of a server listener of k with the
// given RBAC filters.
func buildInboundHCM(k inboundKey, rbacFilters []*hcmv3.HttpFilter) *hcmv3.HttpConnectionManager {
	return &hcmv3.HttpConnectionManager{
		StatPrefix: k.statPrefix(),
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			Name: "inbound|" + strconv.Itoa(int(k.port)),
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    "inbound",
				Domains: []string{"*"},
				Routes: []*routev3.Route{{
					Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
					Action: &routev3.Route_NonForwardingAction{NonForwardingAction: &routev3.NonForwardingAction{}},
				}},
			}},
		}},
		HttpFilters: append(rbacFilters, &hcmv3.HttpFilter{
			Name:       routerFilterName,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{})},
		}),
	}
}

// rbacFilters returns the RBAC filters of a workload, DENY before ALLOW as
// Istio evaluates them: a request matching a deny rule is refused; then,
// when any ALLOW policy applies, a request must match one of its rules.
func rbacFilters(r WorkloadRBAC) []*hcmv3.HttpFilter {
	var out []*hcmv3.HttpFilter
	add := func(suffix string, action rbacv3.RBAC_Action, rules []AuthzRule) {
		policies := make(map[string]*rbacv3.Policy, len(rules))
		for _, rule := range rules {
			policies[rule.Name] = rule.Policy
		}
		out = append(out, &hcmv3.HttpFilter{
			Name: rbacFilterName + "." + suffix,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&rbacfilterv3.RBAC{
				Rules: &rbacv3.RBAC{Action: action, Policies: policies},
			})},
		})
	}
	if len(r.Deny) > 0 {
		add("deny", rbacv3.RBAC_DENY, r.Deny)
	}
	if r.HasAllow {
		add("allow", rbacv3.RBAC_ALLOW, r.Allow)
	}
	return out
}

// serverPorts returns the ports a workload serves gRPC or HTTP on: the
// target ports of the HTTP-family ports of the services selecting it,
// sorted and distinct.
func serverPorts(ctx krt.HandlerContext, services krt.Collection[ServiceInfo], w Workload) []int32 {
	var ports []int32
	for _, key := range w.Services {
		svc, ok := krt.FetchOne(ctx, services, krt.FilterKey(key))
		if !ok {
			continue
		}
		for _, p := range svc.Ports {
			target := p.TargetPort
			if p.TargetPortName != "" {
				target = w.NamedPorts[p.TargetPortName]
			}
			if target != 0 && p.Protocol.IsHTTP() {
				ports = append(ports, target)
			}
		}
	}
	slices.SortFunc(ports, cmp.Compare)
	return slices.Compact(ports)
}

// newServerListeners derives a workload's server listeners from the
// workload, its services' ports and its security's mTLS modes and RBAC.
// A policy change recomputes only the listeners of the workloads it
// applies to (applyingPolicies.security).
func newServerListeners(g *krt.Graph, workloads krt.Collection[Workload], services krt.Collection[ServiceInfo],
	applying applyingPolicies) krt.Collection[Resource[*listenerv3.Listener]] {
	return krt.NewManyCollection(g, workloads, func(ctx krt.HandlerContext, w Workload) []Resource[*listenerv3.Listener] {
		if w.IP == "" {
			return nil
		}
		ports := serverPorts(ctx, services, w)
		if len(ports) == 0 {
			return nil
		}
		sec := applying.security(ctx, w)
		out := make([]Resource[*listenerv3.Listener], 0, len(ports))
		for _, port := range ports {
			out = append(out, serverListener(w, port, sec))
		}
		return out
	}, krt.WithName("ServerListeners"))
}

// serverListener returns the server listener of w on port, which w
// serves, under its security sec. Only the workload's namespace may see
// what its policies are, and only the server asking for its own address
// can use it.
func serverListener(w Workload, port int32, sec WorkloadSecurity) Resource[*listenerv3.Listener] {
	name := ServerListenerName(w.IP, port)
	chain := serverChain(port, cmp.Or(sec.MTLS.PortMode(port), MTLSPermissive), sec.RBAC)
	return Resource[*listenerv3.Listener]{Name: name, Packed: packServerListener(name, w.IP, port, chain),
		VisibleTo: []string{w.Namespace}, NamedOnly: true}
}

// newDemandedServerListeners derives the server listeners of the names
// in demand only (WithServerListenerDemand): a name's listener is the
// one newServerListeners derives of the same name, from the first
// workload, in key order, of the name's address that serves its port.
// Each workload's server listeners are built only while its gRPC
// server asks for them; those of a hundred thousand pods would be most
// of the model's listener bytes, and of its items.
func newDemandedServerListeners(g *krt.Graph, demand krt.Collection[string], workloads krt.Collection[Workload],
	services krt.Collection[ServiceInfo], applying applyingPolicies) krt.Collection[Resource[*listenerv3.Listener]] {
	byIP := krt.NewIndex(workloads, "by-ip", func(w Workload) []string {
		if w.IP == "" {
			return nil
		}
		return []string{w.IP}
	})
	return krt.NewCollection(g, demand, func(ctx krt.HandlerContext, name string) *Resource[*listenerv3.Listener] {
		ip, port, ok := parseServerListenerName(name)
		if !ok {
			return nil
		}
		for _, w := range krt.Fetch(ctx, workloads, krt.FilterIndex(byIP, ip)) {
			if _, serves := slices.BinarySearch(serverPorts(ctx, services, w), port); serves {
				r := serverListener(w, port, applying.security(ctx, w))
				return &r
			}
		}
		return nil
	}, krt.WithName("ServerListeners"))
}

// parseServerListenerName returns the address and port of the server
// listener name, when name is one ServerListenerName returns.
func parseServerListenerName(name string) (ip string, port int32, ok bool) {
	addr, found := strings.CutPrefix(name, ServerListenerNamePrefix)
	if !found {
		return "", 0, false
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || ServerListenerName(host, int32(n)) != name {
		return "", 0, false
	}
	return host, int32(n), true
}
