package security_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/security"
)

// An authority signs a workload's CSR for the identity its token proved,
// whatever the CSR says.
func ExampleAuthority_Sign() {
	td := spiffeid.RequireTrustDomainFromString("cluster.local")
	root, err := security.GenerateRoot(td, time.Now(), 24*time.Hour)
	if err != nil {
		panic(err)
	}
	ca := security.NewStaticAuthority(root, security.WithLeafTTL(time.Hour))

	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	csr := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})

	id, _ := security.Identity{Namespace: "shop", ServiceAccount: "web"}.ID(td)
	iss, err := ca.Sign(security.Request{CSR: csr, ID: id})
	if err != nil {
		panic(err)
	}
	fmt.Println(iss.Leaf.URIs[0], iss.Leaf.NotAfter.Sub(iss.Leaf.NotBefore))
	// Output: spiffe://cluster.local/ns/shop/sa/web 1h1m0s
}

// A rotation trusts the new root first, signs with it after the
// propagation time, and drops the old one once its last leaf expired.
func ExampleRoots_Rotate() {
	td := spiffeid.RequireTrustDomainFromString("cluster.local")
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	old, _ := security.GenerateRoot(td, t0, 365*24*time.Hour)
	next, _ := security.GenerateRoot(td, t0, 365*24*time.Hour)
	rs := security.Roots{{KeyPair: old, TrustFrom: t0, SignFrom: t0}}
	p := security.RotationPolicy{Propagation: 24 * time.Hour, LeafTTL: 24 * time.Hour}
	rs, err := rs.Rotate(next, t0, p)
	if err != nil {
		panic(err)
	}
	for _, h := range []int{0, 24, 48} {
		v := rs.At(t0.Add(time.Duration(h) * time.Hour))
		fmt.Printf("+%dh %s: %d roots trusted, new root signs: %v\n", h, v.Phase, len(v.Bundle), v.Signer.Cert == next.Cert)
	}
	// Output:
	// +0h trust-new: 2 roots trusted, new root signs: false
	// +24h sign-new: 2 roots trusted, new root signs: true
	// +48h stable: 1 roots trusted, new root signs: true
}
