package collections

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// CertProviderInstance is the name of the certificate provider instance,
// in the gRPC xDS bootstrap's certificate_providers, that the TLS
// contexts meshd serves take the workload's certificate, key and roots
// from. The bootstrap meshd's agent writes names its file_watcher
// provider so, as Istio's agent does.
const CertProviderInstance = "default"

// tlsTransportSocketName is the only transport socket gRPC accepts.
const tlsTransportSocketName = "envoy.transport_sockets.tls"

// commonTLS takes the identity and the roots from the certificate
// provider; a client also checks that the server's certificate carries
// one of sans (SPIFFE IDs), gRPC's replacement for a hostname check.
func commonTLS(sans []string) *tlsv3.CommonTlsContext {
	v := &tlsv3.CertificateValidationContext{
		CaCertificateProviderInstance: &tlsv3.CertificateProviderPluginInstance{InstanceName: CertProviderInstance},
	}
	for _, san := range sans {
		// grpc-go reads the untyped matchers, which compare every SAN of
		// the certificate, the URI SAN among them.
		//lint:ignore SA1019 grpc-go v1.85 reads match_subject_alt_names, not the typed field.
		v.MatchSubjectAltNames = append(v.MatchSubjectAltNames,
			&matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: san}})
	}
	return &tlsv3.CommonTlsContext{
		TlsCertificateProviderInstance: &tlsv3.CertificateProviderPluginInstance{InstanceName: CertProviderInstance},
		ValidationContextType:          &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: v},
	}
}

// upstreamTLS is the transport socket of a cluster whose endpoints
// require mutual TLS: present the workload's certificate, accept a server
// certificate of the roots naming one of sans.
func upstreamTLS(sans []string) *corev3.TransportSocket {
	return &corev3.TransportSocket{
		Name: tlsTransportSocketName,
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&tlsv3.UpstreamTlsContext{
			CommonTlsContext: commonTLS(sans),
		})},
	}
}

// downstreamTLS is the transport socket of a server filter chain: serve
// the workload's certificate and require a client certificate of the
// roots.
func downstreamTLS() *corev3.TransportSocket {
	return &corev3.TransportSocket{
		Name: tlsTransportSocketName,
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: mustAny(&tlsv3.DownstreamTlsContext{
			CommonTlsContext:         commonTLS(nil),
			RequireClientCertificate: wrapperspb.Bool(true),
		})},
	}
}
