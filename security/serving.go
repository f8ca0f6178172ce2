package security

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"
)

// ServingRequest asks for the certificate a server of the mesh presents
// to its clients: meshd's own xDS and signing port. It is not for
// workloads, whose certificates name a SPIFFE ID only (Sign).
type ServingRequest struct {
	// Key is the public key to certify: ECDSA P-256 or P-384, or RSA
	// 2048 to 4096 bits.
	Key crypto.PublicKey
	// DNSNames and IPs are the names clients reach the server by; at
	// least one of them.
	DNSNames []string
	IPs      []net.IP
	// TTL is the validity; 0 or more than the authority's leaf TTL: the
	// leaf TTL.
	TTL time.Duration
}

// ErrNoServingNames is returned by SignServing for a request naming no
// DNS name and no IP.
var ErrNoServingNames = errors.New("security: serving certificate without a name")

// SignServing issues a server-auth certificate for req.Key naming its DNS
// names and IPs, from the signing root (so clients trusting the mesh's
// bundle verify it), with the chain and the bundle as Sign. The caller
// is meshd itself, so nothing is authenticated here. Errors wrap
// ErrNoServingNames, ErrUnsupportedKey, ErrNotInitialized or ErrNoSigner.
func (a *Authority) SignServing(req ServingRequest) (Issued, error) {
	if len(req.DNSNames) == 0 && len(req.IPs) == 0 {
		return Issued{}, ErrNoServingNames
	}
	if err := checkKey(req.Key); err != nil {
		return Issued{}, err
	}
	tmpl := &x509.Certificate{
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    req.DNSNames,
		IPAddresses: req.IPs,
	}
	iss, err := a.issue(req.Key, tmpl, req.TTL)
	if err != nil {
		return Issued{}, fmt.Errorf("serving certificate for %v %v: %w", req.DNSNames, req.IPs, err)
	}
	return iss, nil
}
