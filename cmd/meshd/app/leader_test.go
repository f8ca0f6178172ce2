package app

import (
	"strings"
	"testing"
)

func TestOwnNamespace(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "mesh-ops")
	if got := ownNamespace(true); got != "mesh-ops" {
		t.Errorf("with POD_NAMESPACE: %q, want mesh-ops", got)
	}
	t.Setenv("POD_NAMESPACE", "")
	if got := ownNamespace(false); got != "default" {
		t.Errorf("outside a cluster: %q, want default", got)
	}
}

// TestCandidateIdentity: two processes on one host must not share an
// identity, or both would believe they hold the Lease.
func TestCandidateIdentity(t *testing.T) {
	a, b := candidateIdentity(), candidateIdentity()
	if a == b {
		t.Fatalf("two candidates are both %q", a)
	}
	host, suffix, ok := strings.Cut(a, "_")
	if !ok || host == "" || len(suffix) != 8 {
		t.Errorf("identity %q: want <host>_<8 hex digits>", a)
	}
}
