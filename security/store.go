package security

import "context"

// Store keeps the CA's state files (StateFile, BundleFile) where every
// replica finds them: a directory (security/castore) or a Kubernetes
// Secret (security/kube). Implementations are safe for concurrent use.
type Store interface {
	// Load returns the stored files, or ErrNoState.
	Load(ctx context.Context) (Stored, error)
	// Create stores files unless files are stored already, in which case
	// it returns those: the first writer wins, so replicas racing at first
	// start all end up with the same roots.
	Create(ctx context.Context, files map[string][]byte) (Stored, error)
	// Update replaces the files stored at revision; ErrConflict when they
	// changed since.
	Update(ctx context.Context, revision string, files map[string][]byte) (Stored, error)
}

// Stored is a Store's files and the revision they have there.
type Stored struct {
	Files    map[string][]byte
	Revision string
}
