package collections

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
)

// Well-known filter names.
const (
	routerFilterName = "envoy.filters.http.router"
	hcmFilterName    = "envoy.filters.network.http_connection_manager"
)

// httpConnectionManager returns an HCM that fetches the route
// configuration routeName over ADS and ends in the router filter, which
// gRPC clients require to be last.
func httpConnectionManager(statPrefix, routeName string) *hcmv3.HttpConnectionManager {
	return &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		CodecType:  hcmv3.HttpConnectionManager_AUTO,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsConfigSource(),
			RouteConfigName: routeName,
		}},
		HttpFilters: []*hcmv3.HttpFilter{{
			Name:       routerFilterName,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{})},
		}},
	}
}

// buildGRPCListener returns the listener a gRPC client dialing
// xds:///<hostname>:<port> asks for: an ApiListener whose HCM names the
// route configuration of the same name.
func buildGRPCListener(name string) *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:        name,
		ApiListener: &listenerv3.ApiListener{ApiListener: mustAny(httpConnectionManager(name, name))},
	}
}

// SidecarListenerName returns "0.0.0.0_<port>", the name of the outbound
// listener of sidecar proxies for a port.
func SidecarListenerName(port int32) string { return "0.0.0.0_" + itoa(port) }

// buildSidecarListener returns the outbound listener name of sidecar
// proxies for a port: HTTP traffic to any service on the port, routed by
// the route configuration route.
func buildSidecarListener(name string, port int32, route string) *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:             name,
		Address:          socketAddress("0.0.0.0", uint32(port)),
		TrafficDirection: corev3.TrafficDirection_OUTBOUND,
		FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{{
				Name: hcmFilterName,
				ConfigType: &listenerv3.Filter_TypedConfig{
					TypedConfig: mustAny(httpConnectionManager("outbound_"+name, route)),
				},
			}},
		}},
	}
}

// tcpProxyFilterName is the name of Envoy's TCP proxy network filter.
const tcpProxyFilterName = "envoy.filters.network.tcp_proxy"

// buildSidecarTCPListener returns the outbound listener of sidecar proxies
// for a non-HTTP service port: connections to the service's cluster IP and
// port are proxied to the port's cluster.
func buildSidecarTCPListener(name, clusterIP string, port int32, cluster string) *listenerv3.Listener {
	return &listenerv3.Listener{
		Name:             name,
		Address:          socketAddress(clusterIP, uint32(port)),
		TrafficDirection: corev3.TrafficDirection_OUTBOUND,
		FilterChains: []*listenerv3.FilterChain{{
			Filters: []*listenerv3.Filter{{
				Name: tcpProxyFilterName,
				ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(&tcpproxyv3.TcpProxy{
					StatPrefix:       cluster,
					ClusterSpecifier: &tcpproxyv3.TcpProxy_Cluster{Cluster: cluster},
				})},
			}},
		}},
	}
}
