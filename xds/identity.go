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
// A stream without a verified certificate (plaintext, or TLS where the
// client presented none) is anonymous: WithAnonymous says what it gets;
// by default (AnonymousNone) every request it makes is refused with
// Unauthenticated, logged and counted in Stats.Unauthenticated.
//
// It takes effect only with WithNamespaceIsolation. Certificates are
// verified by the server's TLS configuration (WithTLS with a client CA,
// or a WithTLSConfig that verifies them, when given or always).
func WithPeerNamespace(namespaceOf func(cert *x509.Certificate) (namespace string, ok bool)) Option {
	return func(o *options) { o.peerNamespace = namespaceOf }
}

// Anonymous is what a stream without a verified client certificate gets
// when namespace isolation is bound to certificates (WithPeerNamespace).
type Anonymous int

const (
	// AnonymousNone refuses its requests with Unauthenticated. The default.
	AnonymousNone Anonymous = iota
	// AnonymousPublic serves it the resources visible to every namespace;
	// a node naming a namespace it cannot prove is refused, as one whose
	// certificate names no namespace.
	AnonymousPublic
	// AnonymousNodeClaim serves it the view of the namespace its node
	// names (NodeNamespace, or the isolation's rule), as without
	// WithPeerNamespace: for a plaintext port on a trusted network.
	AnonymousNodeClaim
)

// WithAnonymous sets what a stream without a verified client certificate
// gets under WithPeerNamespace. Default: AnonymousNone.
func WithAnonymous(a Anonymous) Option { return func(o *options) { o.anonymous = a } }

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

// peerIdentity names the verified leaf of a stream's connection for the
// registry: its SPIFFE ID when it holds exactly one, else its subject;
// "" without a certificate.
func peerIdentity(cert *x509.Certificate) string {
	if cert == nil {
		return ""
	}
	id := ""
	for _, u := range cert.URIs {
		if strings.EqualFold(u.Scheme, "spiffe") {
			if id != "" {
				return cert.Subject.String()
			}
			id = u.String()
		}
	}
	if id == "" {
		return cert.Subject.String()
	}
	return id
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
