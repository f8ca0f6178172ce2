package collections

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// httpProtocolOptionsKey is the extension name under which Envoy reads
// upstream HTTP protocol options of a cluster.
const httpProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// adsConfigSource says "fetch this over the ADS stream already open",
// the only config source gRPC proxyless clients accept besides self.
func adsConfigSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

// buildCluster returns the EDS cluster of a service port. gRPC clients
// require type EDS with an ADS eds_config and a supported lb_policy;
// HTTP/2 protocols tell Envoy to speak HTTP/2 upstream, which gRPC clients
// ignore. Envoy's stats name a cluster by its name when alt_stat_name is
// unset, so it is left out rather than repeat the name.
func buildCluster(name string, proto Protocol, connectTimeout time.Duration) *clusterv3.Cluster {
	c := &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{
			EdsConfig:   adsConfigSource(),
			ServiceName: name,
		},
		ConnectTimeout: durationpb.New(connectTimeout),
		LbPolicy:       clusterv3.Cluster_ROUND_ROBIN,
	}
	if proto.IsHTTP2() {
		c.TypedExtensionProtocolOptions = map[string]*anyMsg{
			httpProtocolOptionsKey: mustAny(&httpv3.HttpProtocolOptions{
				UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
					ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
						ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
							Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
						},
					},
				},
			}),
		}
	}
	return c
}

// newClusters derives the clusters of each service port; a cluster whose
// endpoints require mTLS (ClusterSecurity) gets a TLS transport socket
// accepting the identities behind it.
func newClusters(g *krt.Graph, services krt.Collection[ServiceInfo], mesh krt.Collection[meshconfig.MeshConfig],
	security krt.Collection[ClusterSecurity]) krt.Collection[Resource[*clusterv3.Cluster]] {
	return krt.NewManyCollection(g, services, func(ctx krt.HandlerContext, svc ServiceInfo) []Resource[*clusterv3.Cluster] {
		timeout := time.Duration(fetchMesh(ctx, mesh).ConnectTimeout)
		out := make([]Resource[*clusterv3.Cluster], 0, len(svc.Ports))
		for _, p := range svc.Ports {
			name := ClusterName(p.Port, svc.Hostname)
			c := buildCluster(name, p.Protocol, timeout)
			if sec, ok := krt.FetchOne(ctx, security, krt.FilterKey(name)); ok && sec.MTLS {
				c.TransportSocket = upstreamTLS(sec.SANs)
			}
			out = append(out, packCluster(name, c).exported(svc.ExportTo))
		}
		return out
	}, krt.WithName("Clusters"))
}

// packCluster marshals c with its protocol options after every other
// field: parsers take fields in any order, and so the form without them
// that gRPC clients are sent (GRPCClusterForm) is a prefix of these
// bytes, shared rather than copied. c is not kept.
func packCluster(name string, c *clusterv3.Cluster) Resource[*clusterv3.Cluster] {
	opts := c.TypedExtensionProtocolOptions
	if len(opts) == 0 {
		return newResource(name, c)
	}
	c.TypedExtensionProtocolOptions = nil
	rest := mustMarshal(c)
	optsField := mustMarshal(&clusterv3.Cluster{TypedExtensionProtocolOptions: opts})
	b := append(make([]byte, 0, len(rest)+len(optsField)), rest...)
	return Resource[*clusterv3.Cluster]{Name: name, Packed: &anypb.Any{TypeUrl: clusterTypeURL, Value: append(b, optsField...)}}
}

// clusterTypeURL is the type URL of a packed Cluster.
var clusterTypeURL = typeURLOf(&clusterv3.Cluster{})
