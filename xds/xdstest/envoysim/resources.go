package envoysim

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// The resource types the proxy asks for, named as go-control-plane
// names them: the client does not take the server's word for them.
const (
	ClusterType  = resourcev3.ClusterType
	EndpointType = resourcev3.EndpointType
	ListenerType = resourcev3.ListenerType
	RouteType    = resourcev3.RouteType
)

// startOrder is the order in which a reconnecting Envoy asks for its types
// again: the order it first subscribed to them.
var startOrder = []string{ClusterType, EndpointType, ListenerType, RouteType}

// wildcardType reports whether Envoy subscribes to typeURL as a whole
// (Listeners and Clusters) rather than by the names its other resources
// need.
func wildcardType(typeURL string) bool { return typeURL == ClusterType || typeURL == ListenerType }

// short names a type in messages.
func short(typeURL string) string {
	switch typeURL {
	case ClusterType:
		return "CDS"
	case EndpointType:
		return "EDS"
	case ListenerType:
		return "LDS"
	case RouteType:
		return "RDS"
	}
	return typeURL
}

// validator is what protoc-gen-validate generates for every Envoy message:
// Envoy rejects a resource that breaks its constraints.
type validator interface{ Validate() error }

// decode unpacks a resource of typeURL, checks it as Envoy does, and
// returns it with its name.
func decode(typeURL string, a *anypb.Any) (string, proto.Message, error) {
	if a.GetTypeUrl() != typeURL {
		return "", nil, fmt.Errorf("resource of type %s in a %s response", a.GetTypeUrl(), short(typeURL))
	}
	var msg proto.Message
	switch typeURL {
	case ClusterType:
		msg = &clusterv3.Cluster{}
	case EndpointType:
		msg = &endpointv3.ClusterLoadAssignment{}
	case ListenerType:
		msg = &listenerv3.Listener{}
	case RouteType:
		msg = &routev3.RouteConfiguration{}
	default:
		return "", nil, fmt.Errorf("type %s is not one Envoy asked for", typeURL)
	}
	if err := a.UnmarshalTo(msg); err != nil {
		return "", nil, fmt.Errorf("decode %s: %w", short(typeURL), err)
	}
	if err := msg.(validator).Validate(); err != nil {
		return "", nil, fmt.Errorf("invalid %s: %w", short(typeURL), err)
	}
	name := resourceName(msg)
	if l, ok := msg.(*listenerv3.Listener); ok {
		if _, err := connectionManagers(l); err != nil {
			return "", nil, fmt.Errorf("listener %s: %w", name, err)
		}
	}
	return name, msg, nil
}

// resourceName is the name a resource is known by.
func resourceName(msg proto.Message) string {
	switch m := msg.(type) {
	case *endpointv3.ClusterLoadAssignment:
		return m.GetClusterName()
	case interface{ GetName() string }:
		return m.GetName()
	}
	return ""
}

// edsName returns the load assignment an EDS cluster waits for, and
// false for a cluster of another discovery type, which needs none.
func edsName(c *clusterv3.Cluster) (string, bool) {
	if c.GetType() != clusterv3.Cluster_EDS {
		return "", false
	}
	if n := c.GetEdsClusterConfig().GetServiceName(); n != "" {
		return n, true
	}
	return c.GetName(), true
}

// listenerRoutes returns the RDS route configurations a listener names.
// Envoy does not take a listener with an api_listener from LDS (only from
// its bootstrap), so those name none.
func listenerRoutes(l *listenerv3.Listener) []string {
	if l.GetApiListener() != nil {
		return nil
	}
	hcms, _ := connectionManagers(l)
	var out []string
	for _, h := range hcms {
		if n := h.GetRds().GetRouteConfigName(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// connectionManagers returns the HTTP connection managers of l's filter
// chains, validated as Envoy validates a filter's typed config.
func connectionManagers(l *listenerv3.Listener) ([]*hcmv3.HttpConnectionManager, error) {
	chains := l.GetFilterChains()
	if dc := l.GetDefaultFilterChain(); dc != nil {
		chains = append(chains[:len(chains):len(chains)], dc)
	}
	var out []*hcmv3.HttpConnectionManager
	for _, fc := range chains {
		for _, f := range fc.GetFilters() {
			tc := f.GetTypedConfig()
			if tc == nil || !tc.MessageIs((*hcmv3.HttpConnectionManager)(nil)) {
				continue
			}
			var hcm hcmv3.HttpConnectionManager
			if err := tc.UnmarshalTo(&hcm); err != nil {
				return nil, fmt.Errorf("filter %s: %w", f.GetName(), err)
			}
			if err := hcm.Validate(); err != nil {
				return nil, fmt.Errorf("filter %s: %w", f.GetName(), err)
			}
			out = append(out, &hcm)
		}
	}
	return out, nil
}

// routeClusters returns the clusters the routes of rc send traffic to.
func routeClusters(rc *routev3.RouteConfiguration) []string {
	var out []string
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			a := r.GetRoute()
			if c := a.GetCluster(); c != "" {
				out = append(out, c)
			}
			for _, wc := range a.GetWeightedClusters().GetClusters() {
				out = append(out, wc.GetName())
			}
		}
	}
	return out
}
