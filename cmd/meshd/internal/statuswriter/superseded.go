package statuswriter

import (
	"slices"
	"sync"
)

// superseded remembers, per object key, the resource versions that the
// writer's own last write replaced on the server. The collection delivers
// that write a moment later; until it does, its copy is one of these
// versions, and deciding on it would write the same status again from a
// stale copy, only to conflict. A copy at such a version is skipped as
// Stale: the write's echo reconciles the object again. The zero value is
// empty and ready; it is safe for concurrent use.
type superseded struct {
	mu    sync.Mutex
	byKey map[string][]string
}

// wrote records that a write to key succeeded over the given versions:
// the copy it was made from and any copy the reconciliation saw first.
func (s *superseded) wrote(key string, versions ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey = map[string][]string{}
	}
	s.byKey[key] = slices.Compact(slices.Sorted(slices.Values(versions)))
}

// replaced reports whether version of key is one the writer's own write
// replaced. A version past them means the collection caught up: the
// key is forgotten.
func (s *superseded) replaced(key, version string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	versions, ok := s.byKey[key]
	if !ok {
		return false
	}
	if slices.Contains(versions, version) {
		return true
	}
	delete(s.byKey, key)
	return false
}

// forget drops what is known of key: the object is gone.
func (s *superseded) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byKey, key)
}
