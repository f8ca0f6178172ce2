package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// DefaultMaxCSRBytes is the largest CSR PEM accepted: an RSA 4096 CSR
// with a URI SAN is under 2 KiB.
const DefaultMaxCSRBytes = 8 << 10

// Request is a CSR to sign for an authenticated caller.
type Request struct {
	// CSR is the PEM "CERTIFICATE REQUEST".
	CSR []byte
	// ID is the caller's SPIFFE ID, taken from its credentials, never from
	// the CSR: the leaf names it and nothing else.
	ID spiffeid.ID
	// TTL is the requested validity; 0 or more than the authority's leaf
	// TTL: the leaf TTL.
	TTL time.Duration
}

// Issued is a signed leaf.
type Issued struct {
	// Leaf is the new certificate.
	Leaf *x509.Certificate
	// Chain is Leaf, then the intermediates up to (not including) the root.
	Chain []*x509.Certificate
	// Bundle is every root trusted now; the leaf chains to one of them.
	Bundle []*x509.Certificate
}

// checkCSR parses and verifies a CSR for id: one PEM block, a valid
// signature, a supported key, and no URI SAN but id.
func checkCSR(data []byte, id spiffeid.ID, maxBytes int) (*x509.CertificateRequest, error) {
	if len(data) > maxBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrCSRTooLarge, len(data), maxBytes)
	}
	b, _ := pem.Decode(data)
	if b == nil || (b.Type != "CERTIFICATE REQUEST" && b.Type != "NEW CERTIFICATE REQUEST") {
		return nil, fmt.Errorf("%w: no PEM CERTIFICATE REQUEST block", ErrMalformedCSR)
	}
	csr, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedCSR, err)
	}
	if err := checkKey(csr.PublicKey); err != nil {
		return nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: signature: %v", ErrMalformedCSR, err)
	}
	for _, u := range csr.URIs {
		if u.String() != id.String() {
			return nil, fmt.Errorf("%w: CSR asks for %s, caller is %s", ErrIdentityMismatch, u, id)
		}
	}
	return csr, nil
}

// checkKey accepts the keys grpc-go, Envoy and Istio's agent use.
func checkKey(pub any) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() || k.Curve == elliptic.P384() {
			return nil
		}
		return fmt.Errorf("%w: ECDSA curve %s (want P-256 or P-384)", ErrUnsupportedKey, k.Curve.Params().Name)
	case *rsa.PublicKey:
		if n := k.N.BitLen(); n >= 2048 && n <= 4096 {
			return nil
		}
		return fmt.Errorf("%w: RSA key of %d bits (want 2048 to 4096)", ErrUnsupportedKey, k.N.BitLen())
	}
	return fmt.Errorf("%w: %T (want ECDSA P-256/P-384 or RSA)", ErrUnsupportedKey, pub)
}

// workloadTemplate is the certificate of a workload: its SPIFFE ID as
// the one URI SAN, for client and server auth.
func workloadTemplate(id spiffeid.ID) *x509.Certificate {
	return &x509.Certificate{
		// An empty subject makes the SAN extension critical, as the
		// X.509-SVID specification asks.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:        []*url.URL{id.URL()},
	}
}

// issueLeaf completes tmpl (its names and extended key usage set) with a
// serial, the validity from now for ttl but never past the issuer's own
// end, and the key usage of pub, and signs it.
func issueLeaf(issuer KeyPair, pub any, tmpl *x509.Certificate, now time.Time, ttl time.Duration) (*x509.Certificate, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(ttl)
	if notAfter.After(issuer.Cert.NotAfter) {
		notAfter = issuer.Cert.NotAfter
	}
	usage := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-clockSkew), notAfter
	tmpl.KeyUsage = usage
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer.Cert, pub, issuer.Key)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing: %w", err)
	}
	return leaf, nil
}
