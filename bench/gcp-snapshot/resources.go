package main

import (
	"fmt"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// typeResources are one snapshot's resources of each type.
type typeResources struct {
	listeners, routes, clusters, assignments []types.Resource
}

// buildResources translates the whole model into xDS, as a
// go-control-plane user does on every change: per service a Listener, a
// RouteConfiguration, an EDS Cluster and a ClusterLoadAssignment.
func buildResources(w *model) (typeResources, error) {
	var r typeResources
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return r, fmt.Errorf("router filter: %w", err)
	}
	for i := range w.n {
		l, err := listener(i, router)
		if err != nil {
			return r, err
		}
		r.listeners = append(r.listeners, l)
		r.routes = append(r.routes, route(i))
		r.clusters = append(r.clusters, cluster(i))
		r.assignments = append(r.assignments, assignment(i, w.podsOf(i)))
	}
	return r, nil
}

// ads is the config source that says "over this ADS stream".
func ads() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

// listener is service i's API listener, as gRPC proxyless clients read it:
// an HttpConnectionManager that fetches its routes over ADS.
func listener(i int, router *anypb.Any) (*listenerv3.Listener, error) {
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: listenerName(i),
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource: ads(), RouteConfigName: listenerName(i),
		}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}},
	})
	if err != nil {
		return nil, fmt.Errorf("listener %s: %w", listenerName(i), err)
	}
	return &listenerv3.Listener{Name: listenerName(i), ApiListener: &listenerv3.ApiListener{ApiListener: hcm}}, nil
}

func route(i int) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{
		Name: listenerName(i),
		VirtualHosts: []*routev3.VirtualHost{{
			Name:    hostname(i),
			Domains: []string{hostname(i), listenerName(i)},
			Routes: []*routev3.Route{{
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: clusterName(i)}}},
			}},
		}},
	}
}

func cluster(i int) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 clusterName(i),
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: ads(), ServiceName: clusterName(i)},
		ConnectTimeout:       durationpb.New(10 * time.Second),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
	}
}

func assignment(i int, ips []string) *endpointv3.ClusterLoadAssignment {
	lbs := make([]*endpointv3.LbEndpoint, len(ips))
	for k, ip := range ips {
		lbs[k] = &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
					Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
				}}},
			}},
			HealthStatus: corev3.HealthStatus_HEALTHY,
		}
	}
	return &endpointv3.ClusterLoadAssignment{
		ClusterName: clusterName(i),
		Endpoints:   []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}},
	}
}
