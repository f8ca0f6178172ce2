package krt

import (
	"sync"
	"sync/atomic"
	"time"
)

// history keeps a collection's recent errors and events for
// introspection. It has its own lock because handler panics are recorded
// outside the graph's lock.
type history struct {
	mu     sync.Mutex
	size   int
	errors []ErrorRecord // ring, oldest first once full
	recent []EventRecord // ring of recent events
	nextE  int
	nextV  int
}

// ErrorRecord is one recorded failure of a collection.
type ErrorRecord struct {
	Time  time.Time `json:"time"`
	Key   string    `json:"key,omitempty"` // the input key, if any
	Error string    `json:"error"`
	Stack string    `json:"stack,omitempty"`
}

// EventRecord is one recent change of a collection.
type EventRecord struct {
	Time    time.Time `json:"time"`
	Version uint64    `json:"version"`
	Type    string    `json:"type"`
	Key     string    `json:"key"`
}

func (h *history) init(size int) { h.size = size }

func (h *history) error(r ErrorRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errors, h.nextE = pushRing(h.errors, h.nextE, h.size, r)
}

// events records a transaction's events, taking the lock once for all of
// them; now is the transaction's commit time.
func (h *history) events(version uint64, now func() time.Time, evs []EventRecord) {
	if len(evs) == 0 {
		return
	}
	t := now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range evs {
		e.Time, e.Version = t, version
		h.recent, h.nextV = pushRing(h.recent, h.nextV, h.size, e)
	}
}

func pushRing[R any](ring []R, next, size int, r R) ([]R, int) {
	if size <= 0 {
		return ring, next
	}
	if len(ring) < size {
		return append(ring, r), next
	}
	ring[next] = r
	return ring, (next + 1) % size
}

func ringOrdered[R any](ring []R, next int) []R {
	out := make([]R, 0, len(ring))
	out = append(out, ring[next:]...)
	return append(out, ring[:next]...)
}

func (h *history) snapshot() ([]ErrorRecord, []EventRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return ringOrdered(h.errors, h.nextE), ringOrdered(h.recent, h.nextV)
}

// durationHistogram counts recompute durations in exponential buckets
// from 1µs to about 1s.
type durationHistogram struct {
	counts [histBuckets + 1]atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// The bucket bounds: histBuckets of them, from histFirst, each histGrowth
// times the one before.
const (
	histBuckets = 11
	histFirst   = time.Microsecond
	histGrowth  = 4
)

// HistogramBounds returns the upper bounds, in seconds, of the recompute
// duration buckets reported in CollectionInfo.RecomputeBuckets, which has
// one more bucket, for +Inf. They run from 1µs, each four times the one
// before. Every call returns a new slice, which the caller may keep or
// change.
func HistogramBounds() []float64 {
	b := make([]float64, histBuckets)
	d := histFirst
	for i := range b {
		b[i] = d.Seconds()
		d *= histGrowth
	}
	return b
}

// histBucket returns the index of the bucket counting d.
func histBucket(d time.Duration) int {
	i := 0
	for b := histFirst; i < histBuckets && d > b; b *= histGrowth {
		i++
	}
	return i
}

// recomputeTally counts one process call's recomputations, without
// atomics, for flush to add to the collection's counters at once: an
// atomic per recomputation stalls the writer on its own stores.
type recomputeTally struct {
	n      uint64
	counts [histBuckets + 1]uint64
	sum    time.Duration
}

func (t *recomputeTally) observe(d time.Duration) {
	t.n++
	t.counts[histBucket(d)]++
	t.sum += d
}

// flush adds the tally to s and empties it.
func (t *recomputeTally) flush(s *stats) {
	if t.n == 0 {
		return
	}
	s.recomputes.Add(t.n)
	for i, c := range t.counts {
		if c > 0 {
			s.durations.counts[i].Add(c)
		}
	}
	s.durations.sum.Add(int64(t.sum))
	*t = recomputeTally{}
}

func (h *durationHistogram) snapshot() ([]uint64, time.Duration) {
	c := make([]uint64, len(h.counts))
	for i := range h.counts {
		c[i] = h.counts[i].Load()
	}
	return c, time.Duration(h.sum.Load())
}
