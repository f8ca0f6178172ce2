package krt

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
)

// prefixSortMin is the fewest events sorted through their keys'
// prefixes: below it the keys fit in the cache, and the array of
// prefixes costs more than it saves.
const prefixSortMin = 512

// parallelSortMin is the fewest events worth sorting on two goroutines:
// below it the sort takes less than starting one and splitting cost.
const parallelSortMin = 4096

// splitSamples is how many keys the split's pivot is the median of.
const splitSamples = 31

func eventByKey[T any](a, b Event[T]) int { return strings.Compare(a.Key, b.Key) }

// keyPrefix stands for event i in a large sort: the first 16 bytes of its
// key, big-endian and padded with zeros, so that most comparisons read
// two words of one array rather than two keys scattered over the heap
// (a mesh-config change's 50,000 keys are a cache miss each).
type keyPrefix struct {
	hi, lo uint64
	i      int32
}

var prefixPool sync.Pool // *[]keyPrefix

// sortEventsOn orders a batch's events by key. A large batch, such as a
// mesh-config change's (one event per workload), is sorted by its keys'
// prefixes, and on two goroutines when two is true (the graph may compute
// on two): finish runs after the transaction's computing is done, so the
// second core is idle then. A batch's keys are distinct, so the order is
// the one a single sort gives.
func sortEventsOn[T any](events []Event[T], two bool) {
	if len(events) < prefixSortMin {
		slices.SortFunc(events, eventByKey[T])
		return
	}
	pp, _ := prefixPool.Get().(*[]keyPrefix)
	if pp == nil {
		pp = new([]keyPrefix)
	}
	prefixes := prefixesOf(events, (*pp)[:0])
	byKey := func(a, b keyPrefix) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return strings.Compare(events[a.i].Key, events[b.i].Key)
	}
	if two && len(events) >= parallelSortMin {
		lo, hi := splitAround(prefixes, byKey)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			slices.SortFunc(lo, byKey)
		}()
		slices.SortFunc(hi, byKey)
		wg.Wait()
	} else {
		slices.SortFunc(prefixes, byKey)
	}
	permute(events, prefixes)
	*pp = prefixes
	prefixPool.Put(pp)
}

// prefixesOf appends each event's keyPrefix to out.
func prefixesOf[T any](events []Event[T], out []keyPrefix) []keyPrefix {
	out = slices.Grow(out, len(events))
	for i := range events {
		var b [16]byte
		copy(b[:], events[i].Key)
		out = append(out, keyPrefix{hi: binary.BigEndian.Uint64(b[:8]), lo: binary.BigEndian.Uint64(b[8:]), i: int32(i)})
	}
	return out
}

// permute moves events into the order of sorted, whose k-th entry names
// the event that belongs at k, following each cycle of the permutation
// in place; it marks the entries it has placed.
func permute[T any](events []Event[T], sorted []keyPrefix) {
	for k := range sorted {
		if sorted[k].i < 0 || int(sorted[k].i) == k {
			continue
		}
		held, j := events[k], k
		for {
			next := int(sorted[j].i)
			sorted[j].i = -1
			if next == k {
				events[j] = held
				break
			}
			events[j], j = events[next], next
		}
	}
}

// splitAround reorders s so that the elements before the pivot, the
// median of evenly spaced samples, come first, and returns the two parts.
func splitAround[E any](s []E, compare func(a, b E) int) (lo, hi []E) {
	var samples [splitSamples]E
	step := len(s) / splitSamples
	for i := range samples {
		samples[i] = s[i*step]
	}
	slices.SortFunc(samples[:], compare)
	pivot := samples[splitSamples/2]
	n := 0
	for j := range s {
		if compare(s[j], pivot) < 0 {
			s[n], s[j] = s[j], s[n]
			n++
		}
	}
	return s[:n], s[n:]
}
