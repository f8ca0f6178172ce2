package agent

import (
	"fmt"
	"io/fs"

	"github.com/meshd/meshd/internal/atomicfile"
)

// The files an agent writes into its output directory.
const (
	CertChainFile = "cert-chain.pem"
	KeyFile       = "key.pem"
	RootCertFile  = "root-cert.pem"
	BootstrapFile = "bootstrap.json"
)

// writeAtomic writes data to dir/name through a temporary file renamed
// over it, so a reader sees the old file or the new one, never half.
func writeAtomic(dir, name string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.Write(dir, name, data, mode); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
