package castore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshd/meshd/internal/atomicfile"
	"github.com/meshd/meshd/security"
)

// Dir is a security.Store in a directory.
type Dir struct {
	path string
}

// NewDir returns the store in dir, which Create makes (mode 0700) if it
// does not exist.
func NewDir(dir string) *Dir { return &Dir{path: dir} }

var _ security.Store = (*Dir)(nil)

// modes are the files' permissions: the state holds private keys.
var modes = map[string]fs.FileMode{security.StateFile: 0o600, security.BundleFile: 0o644}

// Load implements security.Store.
func (d *Dir) Load(context.Context) (security.Stored, error) {
	data, err := os.ReadFile(filepath.Join(d.path, security.StateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return security.Stored{}, security.ErrNoState
	}
	if err != nil {
		return security.Stored{}, fmt.Errorf("castore: %w", err)
	}
	files := map[string][]byte{security.StateFile: data}
	if b, err := os.ReadFile(filepath.Join(d.path, security.BundleFile)); err == nil {
		files[security.BundleFile] = b
	}
	return security.Stored{Files: files, Revision: revision(data)}, nil
}

// Create implements security.Store.
func (d *Dir) Create(ctx context.Context, files map[string][]byte) (security.Stored, error) {
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return security.Stored{}, fmt.Errorf("castore: %w", err)
	}
	if err := d.write(security.BundleFile, files[security.BundleFile], false); err != nil {
		return security.Stored{}, err
	}
	err := d.write(security.StateFile, files[security.StateFile], true)
	if errors.Is(err, fs.ErrExist) {
		return d.Load(ctx)
	}
	if err != nil {
		return security.Stored{}, err
	}
	return security.Stored{Files: files, Revision: revision(files[security.StateFile])}, nil
}

// Update implements security.Store.
func (d *Dir) Update(ctx context.Context, rev string, files map[string][]byte) (security.Stored, error) {
	cur, err := d.Load(ctx)
	if err != nil {
		return security.Stored{}, err
	}
	if cur.Revision != rev {
		return security.Stored{}, security.ErrConflict
	}
	// The bundle first: a reader of the new state finds its bundle.
	for _, name := range []string{security.BundleFile, security.StateFile} {
		if err := d.write(name, files[name], false); err != nil {
			return security.Stored{}, err
		}
	}
	return security.Stored{Files: files, Revision: revision(files[security.StateFile])}, nil
}

// write writes data to name atomically through a temporary file; with
// exclusive it fails with fs.ErrExist instead of replacing name.
func (d *Dir) write(name string, data []byte, exclusive bool) error {
	tmp, err := atomicfile.Temp(d.path, name, data, modes[name])
	if err != nil {
		return fmt.Errorf("castore: %w", err)
	}
	defer os.Remove(tmp) // after a link, the temporary name; after a rename, nothing
	final := filepath.Join(d.path, name)
	if exclusive {
		// A link fails if final exists: the first creator wins.
		if err := os.Link(tmp, final); err != nil {
			return fmt.Errorf("castore: creating %s: %w", name, err)
		}
		return syncDir(d.path)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("castore: %w", err)
	}
	return syncDir(d.path)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("castore: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("castore: sync %s: %w", dir, err)
	}
	return nil
}

func revision(state []byte) string {
	sum := sha256.Sum256(state)
	return hex.EncodeToString(sum[:8])
}
