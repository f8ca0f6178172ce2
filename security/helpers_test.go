package security

import (
	"context"
	"crypto"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/security/securitytest"
)

var td = spiffeid.RequireTrustDomainFromString("cluster.local")

// t0 is the tests' start of time.
var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func mustID(t testing.TB, ns, sa string) spiffeid.ID {
	t.Helper()
	id, err := Identity{ns, sa}.ID(td)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func ecKey(t testing.TB) crypto.Signer { return securitytest.Key(t) }

// csrPEM returns a CSR of key naming uris.
func csrPEM(t testing.TB, key crypto.Signer, uris ...string) []byte {
	return []byte(securitytest.CSR(t, key, uris...))
}

func root(t testing.TB, at time.Time) KeyPair {
	t.Helper()
	kp, err := GenerateRoot(td, at, DefaultRootValidity)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// memStore is a Store in memory, with the semantics every Store has,
// safe for replicas running at once.
type memStore struct {
	mu    sync.Mutex
	files map[string][]byte
	rev   int
}

func (m *memStore) Load(ctx context.Context) (Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadLocked()
}

func (m *memStore) loadLocked() (Stored, error) {
	if m.files == nil {
		return Stored{}, ErrNoState
	}
	return Stored{Files: m.files, Revision: strconv.Itoa(m.rev)}, nil
}

func (m *memStore) Create(ctx context.Context, files map[string][]byte) (Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files, m.rev = files, 1
	}
	return m.loadLocked()
}

func (m *memStore) Update(ctx context.Context, rev string, files map[string][]byte) (Stored, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rev != strconv.Itoa(m.rev) {
		return Stored{}, ErrConflict
	}
	m.files = files
	m.rev++
	return m.loadLocked()
}
