package sources

import (
	"hash/maphash"
	"maps"
	"runtime"
	"sync"
	"weak"
)

// The pods of one ReplicaSet, DaemonSet or Job carry equal labels, yet
// every decoded Pod has a map of its own: at 100,000 pods the label maps
// (about 300 bytes each with one label) were more memory than any
// collection of the model. NewPodInfo shares one map per distinct label
// set among the PodInfos that carry it.

// labelSets interns label maps by their content, found by a hash of it.
// The table holds them weakly: a set leaves it once no PodInfo holds it,
// so the label sets of pods long gone (every rollout makes a new
// pod-template-hash) do not accumulate.
type labelSets struct {
	mu   sync.Mutex
	sets map[uint64]weak.Pointer[labelSet]
}

// labelSet boxes a shared map: a weak pointer needs an object to point
// to, and the PodInfos that share the map hold the box, keeping it (and
// so its table entry) alive as long as one of them is.
type labelSet struct{ m map[string]string }

// podLabels is the table NewPodInfo shares label maps through; every
// source converts pods through it, so equal sets are shared across them.
var podLabels = &labelSets{sets: map[uint64]weak.Pointer[labelSet]{}}

var labelSeed = maphash.MakeSeed()

// intern returns the shared set equal to m, storing m as that set when
// there is none; nil for an empty m, and when another set has m's hash
// (m is then not shared). m must not be changed afterwards.
func (t *labelSets) intern(m map[string]string) *labelSet {
	if len(m) == 0 {
		return nil
	}
	h := labelsHash(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.sets[h].Value(); s != nil {
		if maps.Equal(s.m, m) {
			return s
		}
		return nil
	}
	s := &labelSet{m: m}
	t.sets[h] = weak.Make(s)
	runtime.AddCleanup(s, t.forget, h)
	return s
}

// forget drops the entry of h once its set is gone, unless a new set took
// the hash meanwhile.
func (t *labelSets) forget(h uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sets[h].Value() == nil {
		delete(t.sets, h)
	}
}

// size returns the number of sets in the table.
func (t *labelSets) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sets)
}

// labelsHash hashes m's pairs in any order: the sum of a hash per pair,
// so that no sort, and no allocation, is needed.
func labelsHash(m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		var h maphash.Hash
		h.SetSeed(labelSeed)
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum
}
