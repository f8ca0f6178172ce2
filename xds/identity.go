package xds

import (
	"crypto/x509"
	"net/url"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// WithPeerNamespace binds namespace isolation (WithNamespaceIsolation) to
// the client's verified certificate: namespaceOf tells a proxy's
// namespace from the leaf certificate its TLS handshake verified (see
// SPIFFENamespace), and the node's own claim no longer decides it.
//
// A stream's namespace is the certificate's, from its start. A stream
// without a verified certificate (plaintext, or TLS without client
// authentication), or whose certificate names no namespace, has none and
// sees only the resources visible to all. The node may still name a
// namespace (through the isolation's rule, NodeNamespace by default), but
// only the certificate's: a node naming another namespace, or naming one
// when the certificate names none, ends the stream with PermissionDenied,
// logged and counted in Stats.IdentityMismatch, rather than being served
// either namespace's view. A node naming no namespace is served the
// certificate's.
//
// It takes effect only with WithNamespaceIsolation, and is a boundary
// only with client certificates required (WithTLS with a client CA, or a
// WithTLSConfig that requires and verifies them).
func WithPeerNamespace(namespaceOf func(cert *x509.Certificate) (namespace string, ok bool)) Option {
	return func(o *options) { o.peerNamespace = namespaceOf }
}

// SPIFFENamespace is a rule for WithPeerNamespace: the namespace of the
// certificate's SPIFFE ID, a URI SAN of the form
// spiffe://<trust-domain>/ns/<namespace>/sa/<service-account> (the form
// Istio issues). Any trust domain is accepted: which certificates are
// trusted is the client CA's decision. A certificate with no such URI, or
// with several SPIFFE URIs (an SVID holds exactly one), names no
// namespace.
func SPIFFENamespace(cert *x509.Certificate) (string, bool) {
	if cert == nil {
		return "", false
	}
	ns, found := "", false
	for _, u := range cert.URIs {
		if !strings.EqualFold(u.Scheme, "spiffe") {
			continue
		}
		if found {
			return "", false
		}
		found = true
		var ok bool
		if ns, ok = spiffeNamespace(u); !ok {
			return "", false
		}
	}
	return ns, found
}

// spiffeNamespace returns the namespace of a spiffe:// URI whose path is
// exactly /ns/<namespace>/sa/<service-account>.
func spiffeNamespace(u *url.URL) (string, bool) {
	if u.Host == "" || u.Opaque != "" || u.User != nil || u.Port() != "" ||
		u.RawQuery != "" || u.Fragment != "" || u.RawPath != "" {
		return "", false
	}
	parts := strings.Split(u.Path, "/")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "ns" || parts[3] != "sa" || parts[2] == "" || parts[4] == "" {
		return "", false
	}
	return parts[2], true
}

// verifiedLeaf returns the client certificate the TLS handshake of the
// stream's connection verified, or nil.
func verifiedLeaf(p *peer.Peer) *x509.Certificate {
	if p == nil {
		return nil
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return nil
	}
	// VerifiedChains is set only when the server verified the client's
	// certificate against its client CAs; PeerCertificates alone would be
	// whatever the client sent.
	chains := info.State.VerifiedChains
	if len(chains) == 0 || len(chains[0]) == 0 {
		return nil
	}
	return chains[0][0]
}
