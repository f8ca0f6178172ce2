package agent

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	f, err := os.CreateTemp(dir, "."+name+".tmp-")
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("agent: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("agent: writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("agent: writing %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	ok = true
	return nil
}
