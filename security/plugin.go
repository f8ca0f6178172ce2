package security

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// NewKeyPair checks an operator's CA (a plug-in CA) and returns it:
// certPEM is the signing certificate, keyPEM its private key, and
// chainPEM, for an intermediate, the certificates above it up to and
// including the root (empty when certPEM is a root). It fails unless the
// key matches the certificate, the certificate may sign certificates,
// and the chain verifies up to a self-signed root.
func NewKeyPair(certPEM, keyPEM, chainPEM []byte) (KeyPair, error) {
	certs, err := ParseCerts(certPEM)
	if err != nil {
		return KeyPair{}, fmt.Errorf("CA certificate: %w", err)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return KeyPair{}, fmt.Errorf("CA key: %w", err)
	}
	kp := KeyPair{Cert: certs[0], Key: key, Chain: certs[1:]}
	if len(chainPEM) > 0 {
		chain, err := ParseCerts(chainPEM)
		if err != nil {
			return KeyPair{}, fmt.Errorf("CA chain: %w", err)
		}
		kp.Chain = append(kp.Chain, chain...)
	}
	if err := kp.check(); err != nil {
		return KeyPair{}, err
	}
	return kp, nil
}

// check verifies what NewKeyPair promises.
func (k KeyPair) check() error {
	pub, err := x509.MarshalPKIXPublicKey(k.Key.Public())
	if err != nil {
		return fmt.Errorf("CA key: %w", err)
	}
	if !bytes.Equal(pub, k.Cert.RawSubjectPublicKeyInfo) {
		return errors.New("CA key does not match the CA certificate")
	}
	if !k.Cert.IsCA || k.Cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return errors.New("CA certificate is not a CA (basic constraints CA:TRUE and key usage certSign needed)")
	}
	root := k.Anchor()
	if err := root.CheckSignatureFrom(root); err != nil {
		return fmt.Errorf("CA chain does not end in a self-signed root (%s): %w", root.Subject, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root)
	inter := x509.NewCertPool()
	// Verified when every certificate is valid: the chain is checked,
	// not the clock, which Sign's expiry metric watches.
	at := k.Cert.NotBefore
	for _, c := range k.Chain {
		inter.AddCert(c)
		if c.NotBefore.After(at) {
			at = c.NotBefore
		}
	}
	_, err = k.Cert.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at.Add(time.Second),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("CA certificate does not chain to its root: %w", err)
	}
	return nil
}
