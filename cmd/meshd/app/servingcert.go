package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/meshd/meshd/security"
)

// servingCert is the xDS listener's certificate from meshd's own CA. It is
// renewed at half its life, and at once when the CA's signing root
// changes (a rotation), so clients trusting the bundle always verify it.
// A renewal changes what new TLS handshakes present; established
// connections, and the xDS streams on them, are not touched.
type servingCert struct {
	ca    *security.Authority
	names []string
	ips   []net.IP
	log   *slog.Logger
	// check is how often run looks for a new signing root.
	check time.Duration
	// ready is closed once a certificate is served.
	ready     chan struct{}
	readyOnce sync.Once

	mu     sync.Mutex // guards following
	cert   *tls.Certificate
	issuer *x509.Certificate // the root that signed cert
}

func newServingCert(ca *security.Authority, sans []string, log *slog.Logger) *servingCert {
	s := &servingCert{ca: ca, log: log, check: time.Minute, ready: make(chan struct{})}
	for _, san := range sans {
		if ip := net.ParseIP(san); ip != nil {
			if !slices.ContainsFunc(s.ips, ip.Equal) {
				s.ips = append(s.ips, ip)
			}
		} else if !slices.Contains(s.names, san) {
			s.names = append(s.names, san)
		}
	}
	return s
}

// renew issues a certificate for a new key and makes it the one served.
func (s *servingCert) renew() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("serving certificate key: %w", err)
	}
	iss, err := s.ca.SignServing(security.ServingRequest{Key: key.Public(), DNSNames: s.names, IPs: s.ips})
	if err != nil {
		return err
	}
	c := &tls.Certificate{PrivateKey: key, Leaf: iss.Leaf}
	for _, cert := range iss.Chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	s.mu.Lock()
	s.cert, s.issuer = c, s.ca.View().Signer.Anchor()
	s.mu.Unlock()
	s.readyOnce.Do(func() { close(s.ready) })
	s.log.Info("xDS serving certificate issued", "dns", s.names, "ips", s.ips, "expires", iss.Leaf.NotAfter)
	return nil
}

// current returns the certificate served now, nil before the first renew.
func (s *servingCert) current() *tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cert
}

// due reports whether the certificate needs renewing at now: none yet,
// past half its life, or signed by a root that no longer signs.
func (s *servingCert) due(now time.Time) bool {
	s.mu.Lock()
	c, issuer := s.cert, s.issuer
	s.mu.Unlock()
	if c == nil {
		return true
	}
	half := c.Leaf.NotBefore.Add(c.Leaf.NotAfter.Sub(c.Leaf.NotBefore) / 2)
	signer := s.ca.View().Signer.Anchor()
	return !now.Before(half) || (signer != nil && !signer.Equal(issuer))
}

// run renews the certificate when due until ctx ends; a failure (the CA's
// root not loaded yet, on a cluster) is retried with backoff from 200ms
// to the check interval.
func (s *servingCert) run(ctx context.Context) error {
	retry := 200 * time.Millisecond
	for {
		wait := s.check
		if s.due(time.Now()) {
			if err := s.renew(); err != nil {
				if !errors.Is(err, security.ErrNotInitialized) {
					s.log.Warn("xDS serving certificate not renewed; retrying", "error", err, "in", retry)
				}
				wait, retry = retry, min(2*retry, s.check)
			} else {
				retry = 200 * time.Millisecond
			}
		}
		if c := s.current(); c != nil {
			half := c.Leaf.NotBefore.Add(c.Leaf.NotAfter.Sub(c.Leaf.NotBefore) / 2)
			wait = min(wait, max(time.Until(half), 0))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// tlsConfig serves the current certificate and verifies the client
// certificates given against the CA's bundle at each handshake, so a
// root rotation's new root is trusted as soon as it enters the bundle. A
// client without a certificate is let in: the signing API authenticates
// it by its token, and xDS decides what an anonymous stream gets.
func (s *servingCert) tlsConfig() *tls.Config {
	return clientCAsFromBundle(&tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := s.current(); c != nil {
				return c, nil
			}
			return nil, errors.New("meshd: no serving certificate yet: the CA's root is not loaded")
		},
	}, s.ca)
}

// clientCAsFromBundle makes base verify client certificates, when given,
// against ca's bundle read at each handshake.
func clientCAsFromBundle(base *tls.Config, ca *security.Authority) *tls.Config {
	return &tls.Config{
		MinVersion: base.MinVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			c := base.Clone()
			c.ClientCAs = x509.NewCertPool()
			for _, r := range ca.View().Bundle {
				c.ClientCAs.AddCert(r)
			}
			c.ClientAuth = tls.VerifyClientCertIfGiven
			return c, nil
		},
	}
}
