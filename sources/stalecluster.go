package sources

import "time"

// StaleCluster names a remote cluster whose API server stopped answering
// while its objects stay in the inputs: they are its last known state,
// and the model flags what it derives from them (collections.Endpoint
// Stale). The collection holds an item only while its cluster is stale.
type StaleCluster struct {
	// Name is the cluster's, as its objects carry it (AnnotationCluster).
	Name string
	// Since is when its API server stopped answering.
	Since time.Time
}

// ResourceName returns the cluster's name, the item's key.
func (s StaleCluster) ResourceName() string { return s.Name }

// Equals reports whether s and o are the same.
func (s StaleCluster) Equals(o StaleCluster) bool { return s.Name == o.Name && s.Since.Equal(o.Since) }
