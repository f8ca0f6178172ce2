package app

import (
	"crypto/tls"
	"fmt"

	"github.com/meshd/meshd/cmd/meshd/internal/certpool"
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
