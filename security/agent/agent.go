package agent

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/meshd/meshd/internal/atomicfile"
	"github.com/meshd/meshd/security"
)

// Agent keeps a workload's certificate. Create it with New; Close it.
type Agent struct {
	cfg    Config
	conn   *grpc.ClientConn
	client pb.IstioCertificateServiceClient
	// bundle is the root bundle last written.
	bundle []byte
}

// Result is what a renewal obtained.
type Result struct {
	// Leaf is the new certificate.
	Leaf *x509.Certificate
	// BundleChanged reports that the roots differ from those written
	// before (by this agent, or found in the directory at its first
	// renewal).
	BundleChanged bool
}

// New returns an agent for cfg. It connects to nothing until used.
func New(cfg Config) (*Agent, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if cfg.CATLS != nil {
		creds = credentials.NewTLS(trustingBundle(cfg.CATLS, filepath.Join(cfg.OutDir, RootCertFile)))
	}
	conn, err := grpc.NewClient(cfg.CAAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("agent: CA %s: %w", cfg.CAAddr, err)
	}
	return &Agent{cfg: cfg, conn: conn, client: pb.NewIstioCertificateServiceClient(conn)}, nil
}

// Close closes the connection to the CA.
func (a *Agent) Close() error { return a.conn.Close() }

// WriteBootstrap writes bootstrap.json into the output directory,
// creating the directory.
func (a *Agent) WriteBootstrap() error {
	if err := os.MkdirAll(a.cfg.OutDir, 0o755); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	b, err := bootstrapJSON(&a.cfg)
	if err != nil {
		return fmt.Errorf("agent: bootstrap: %w", err)
	}
	return writeAtomic(a.cfg.OutDir, BootstrapFile, b, 0o644)
}

// Renew obtains a certificate for a new key and writes the bundle, the
// key and the chain, in that order.
func (a *Agent) Renew(ctx context.Context) (Result, error) {
	token, err := os.ReadFile(a.cfg.TokenFile)
	if err != nil {
		return Result{}, fmt.Errorf("agent: token: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Result{}, fmt.Errorf("agent: key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return Result{}, fmt.Errorf("agent: CSR: %w", err)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := a.client.CreateCertificate(ctx, &pb.IstioCertificateRequest{
		Csr: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})),
	})
	if err != nil {
		return Result{}, fmt.Errorf("agent: CA %s: %w", a.cfg.CAAddr, err)
	}
	chain, bundle, err := checkResponse(resp.GetCertChain(), key)
	if err != nil {
		return Result{}, fmt.Errorf("agent: CA %s answered: %w", a.cfg.CAAddr, err)
	}
	if err := a.write(key, chain, bundle); err != nil {
		return Result{}, err
	}
	// A first renewal compares with what an earlier run left.
	if a.bundle == nil {
		a.bundle, _ = os.ReadFile(filepath.Join(a.cfg.OutDir, RootCertFile))
	}
	changed := a.bundle != nil && !bytes.Equal(bundle, a.bundle)
	a.bundle = bundle
	leaf, _ := security.ParseCerts(chain)
	return Result{Leaf: leaf[0], BundleChanged: changed}, nil
}

// write writes the bundle first, so that a peer's certificate from a new
// root is trusted before this workload presents one.
func (a *Agent) write(key *ecdsa.PrivateKey, chain, bundle []byte) error {
	keyPEM, err := security.EncodeKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(a.cfg.OutDir, 0o755); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	// Staged together: grpc's file watcher reads the key and the chain one
	// after the other, and a pair that does not match stalls a handshake
	// until its next refresh.
	err = atomicfile.WriteAll(a.cfg.OutDir, []atomicfile.File{
		{Name: RootCertFile, Data: bundle, Mode: 0o644},
		{Name: KeyFile, Data: keyPEM, Mode: 0o600},
		{Name: CertChainFile, Data: chain, Mode: 0o644},
	})
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// checkResponse splits Istio's cert_chain (leaf, intermediates, then the
// root bundle last) and checks that the leaf is for key and verifies
// against the bundle.
func checkResponse(elems []string, key *ecdsa.PrivateKey) (chain, bundle []byte, err error) {
	if len(elems) < 2 {
		return nil, nil, fmt.Errorf("cert_chain of %d elements, want the leaf and the roots", len(elems))
	}
	chain = []byte(strings.Join(elems[:len(elems)-1], ""))
	bundle = []byte(elems[len(elems)-1])
	certs, err := security.ParseCerts(chain)
	if err != nil {
		return nil, nil, fmt.Errorf("chain: %w", err)
	}
	roots, err := security.ParseCerts(bundle)
	if err != nil {
		return nil, nil, fmt.Errorf("roots: %w", err)
	}
	if !key.PublicKey.Equal(certs[0].PublicKey) {
		return nil, nil, errors.New("the certificate is not for the key sent")
	}
	pool, inter := x509.NewCertPool(), x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, nil, fmt.Errorf("the certificate does not verify against the roots sent: %w", err)
	}
	return chain, bundle, nil
}

// Run writes the bootstrap, then renews until ctx ends: at half the
// certificate's life, at a quarter after a bundle change, and after a
// failure with backoff (1s doubling to 1m). It returns ctx's error, or the
// error of writing the bootstrap.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.WriteBootstrap(); err != nil {
		return err
	}
	backoff := time.Second
	for {
		var wait time.Duration
		res, err := a.Renew(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			a.cfg.Logger.Warn("certificate renewal failed; retrying", "error", err, "in", backoff)
			wait, backoff = backoff, min(2*backoff, time.Minute)
		case err == nil:
			backoff = time.Second
			next := NextRenewal(res.Leaf.NotBefore, res.Leaf.NotAfter, res.BundleChanged)
			wait = time.Until(next)
			a.cfg.Logger.Info("certificate renewed", "expires", res.Leaf.NotAfter, "next", next, "bundle-changed", res.BundleChanged)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// NextRenewal is when a certificate valid from notBefore to notAfter is
// renewed: at half its life, or at a quarter when the renewal that got
// it brought a new bundle.
func NextRenewal(notBefore, notAfter time.Time, bundleChanged bool) time.Time {
	life := notAfter.Sub(notBefore)
	if bundleChanged {
		return notBefore.Add(life / 4)
	}
	return notBefore.Add(life / 2)
}

// trustingBundle returns base made to verify the CA's certificate against
// base's roots and the PEM bundle in bundleFile, read at each handshake:
// after a root rotation meshd's serving certificate is signed by a root
// that only the bundle written since holds.
func trustingBundle(base *tls.Config, bundleFile string) *tls.Config {
	roots := base.RootCAs
	c := base.Clone()
	// Verified by VerifyConnection below, against the roots of the moment.
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("agent: the CA presented no certificate")
		}
		pool := x509.NewCertPool()
		if roots != nil {
			pool = roots.Clone()
		}
		if b, err := os.ReadFile(bundleFile); err == nil {
			pool.AppendCertsFromPEM(b)
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, DNSName: cs.ServerName})
		if err != nil {
			return fmt.Errorf("agent: the CA's certificate: %w", err)
		}
		return nil
	}
	return c
}
