package security

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// KeyPair is a CA certificate and its private key. Chain holds the
// certificates above Cert, nearest first, ending at a self-signed root;
// it is empty when Cert is a root itself.
type KeyPair struct {
	Cert  *x509.Certificate
	Key   crypto.Signer
	Chain []*x509.Certificate
}

// Anchor returns the root Cert chains to: Cert if it is self-signed,
// else the last certificate of Chain.
func (k KeyPair) Anchor() *x509.Certificate {
	if len(k.Chain) == 0 {
		return k.Cert
	}
	return k.Chain[len(k.Chain)-1]
}

// intermediates returns the certificates a leaf's chain carries after
// the leaf: Cert and Chain, less the root.
func (k KeyPair) intermediates() []*x509.Certificate {
	if len(k.Chain) == 0 {
		return nil
	}
	return append([]*x509.Certificate{k.Cert}, k.Chain[:len(k.Chain)-1]...)
}

// DefaultRootValidity is how long a generated root is valid.
const DefaultRootValidity = 10 * 365 * 24 * time.Hour

// GenerateRoot returns a new self-signed ECDSA P-256 root for td, valid
// from now for validity. Its one URI SAN is the trust domain's ID.
func GenerateRoot(td spiffeid.TrustDomain, now time.Time, validity time.Duration) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generating root key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"meshd"}, CommonName: "meshd root " + serial.Text(16)[:8]},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		URIs:                  []*url.URL{td.ID().URL()},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("creating root certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return KeyPair{}, fmt.Errorf("parsing root certificate: %w", err)
	}
	return KeyPair{Cert: cert, Key: key}, nil
}

// clockSkew backdates certificates, so a peer whose clock is a little
// behind accepts them at once.
const clockSkew = time.Minute

func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	// At least 2^126: the serial's hex is never short.
	return n.SetBit(n, 126, 1), nil
}

// EncodeCerts returns certs as concatenated PEM blocks.
func EncodeCerts(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

// EncodeKey returns key as a PEM "PRIVATE KEY" (PKCS #8).
func EncodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParseCerts parses every PEM CERTIFICATE block of data; other blocks
// are skipped. It fails when there is none.
func ParseCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// ParseKey parses a PEM private key: PKCS #8, SEC 1 (EC) or PKCS #1 (RSA).
func ParseKey(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("no PEM private key found")
	}
	var key any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", key)
	}
	return s, nil
}
