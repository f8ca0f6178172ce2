package security

import (
	"fmt"
	"strings"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// Identity is a workload's Kubernetes service account: what its
// certificate names.
type Identity struct {
	Namespace, ServiceAccount string
}

// String returns "namespace/serviceAccount".
func (i Identity) String() string { return i.Namespace + "/" + i.ServiceAccount }

// ID returns i's SPIFFE ID in td: spiffe://<td>/ns/<namespace>/sa/<sa>.
// It fails when a name is empty or holds a character a SPIFFE path
// segment may not.
func (i Identity) ID(td spiffeid.TrustDomain) (spiffeid.ID, error) {
	id, err := spiffeid.FromSegments(td, "ns", i.Namespace, "sa", i.ServiceAccount)
	if err != nil {
		return spiffeid.ID{}, fmt.Errorf("identity %s: %w", i, err)
	}
	return id, nil
}

// IdentityOf returns the service account a SPIFFE ID of the form
// spiffe://<td>/ns/<namespace>/sa/<sa> names, and false for any other
// path.
func IdentityOf(id spiffeid.ID) (Identity, bool) {
	// A valid ID's path segments are non-empty and hold no '/'.
	seg := strings.Split(strings.TrimPrefix(id.Path(), "/"), "/")
	if len(seg) != 4 || seg[0] != "ns" || seg[2] != "sa" {
		return Identity{}, false
	}
	return Identity{Namespace: seg[1], ServiceAccount: seg[3]}, true
}

// Validate reports whether i makes a SPIFFE ID in any trust domain: both
// names non-empty and of the characters a path segment allows.
func (i Identity) Validate() error {
	_, err := i.ID(anyTrustDomain)
	return err
}

// anyTrustDomain stands in for the real one where only the path matters.
var anyTrustDomain = spiffeid.RequireTrustDomainFromString("example.org")
