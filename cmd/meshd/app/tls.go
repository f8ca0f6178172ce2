package app

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/meshd/meshd/cmd/meshd/internal/certpool"
	"github.com/meshd/meshd/xds"
)

// loadTLS reads the xDS listener's certificate, key and optional client CA,
// so that a bad file fails start-up with a message naming the flag.
func loadTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--xds-tls-cert/--xds-tls-key: %w", err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pool, err := certpool.Read("--xds-client-ca", clientCAFile)
		if err != nil {
			return nil, err
		}
		c.ClientCAs = pool
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// xdsTLSConfig returns the xDS listener's TLS, nil for plaintext: the
// operator's files (whose client certificates, without --xds-client-ca,
// are verified by the CA's roots when --ca is set), or else, with --ca, a
// certificate from meshd's CA, issued now when the root is loaded
// already and renewed by a component.
func (a *App) xdsTLSConfig() (*tls.Config, error) {
	c := a.cfg
	switch {
	case c.XDSTLSCert != "":
		tc, err := loadTLS(c.XDSTLSCert, c.XDSTLSKey, c.XDSClientCA)
		if err != nil {
			return nil, err
		}
		if c.XDSClientCA == "" && a.ca != nil {
			tc = clientCAsFromBundle(tc, a.ca)
		}
		return tc, nil
	case a.ca == nil:
		return nil, nil
	}
	sc := newServingCert(a.ca, a.servingSANs(), a.log.With("component", "xds-tls"))
	if len(a.ca.Roots()) > 0 {
		if err := sc.renew(); err != nil {
			return nil, fmt.Errorf("xDS serving certificate: %w", err)
		}
	}
	a.serving = sc
	a.ready.add("xDS serving certificate", sc.ready)
	a.components = append(a.components, component{"xds serving certificate", sc.run})
	return sc.tlsConfig(), nil
}

// servingSANs are the names of the serving certificate: loopback, the
// host of --xds-addr, the DNS names of meshd's Service on a cluster, and
// --xds-tls-san.
func (a *App) servingSANs() []string {
	c := a.cfg
	sans := []string{"localhost", "127.0.0.1", "::1"}
	if host, _, err := net.SplitHostPort(c.XDSAddr); err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			sans = append(sans, host)
		}
	}
	if c.Kubeconfig != "" || c.InCluster {
		svc := c.XDSServiceName + "." + ownNamespace(c.InCluster)
		sans = append(sans, svc, svc+".svc", svc+".svc.cluster.local")
	}
	return append(sans, c.XDSTLSSANs...)
}

// anonymousPolicy maps --xds-anonymous to the xDS server's policy.
func anonymousPolicy(flag string) xds.Anonymous {
	switch flag {
	case AnonymousPublic:
		return xds.AnonymousPublic
	case AnonymousNode:
		return xds.AnonymousNodeClaim
	}
	return xds.AnonymousNone
}
