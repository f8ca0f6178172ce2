// Package certpool reads the PEM bundles that meshd's flags name (the
// xDS client CA, the agent's root certificate) into certificate pools,
// with errors that name the flag.
package certpool

import (
	"crypto/x509"
	"fmt"
	"os"
)

// Read returns a pool of the PEM certificates in file, which flag (say
// "--root-cert") named. It fails if file cannot be read or holds no PEM
// certificate.
func Read(flag, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate found", flag, file)
	}
	return pool, nil
}
