package krt

import (
	"slices"
	"strings"
	"sync"
)

// parallelSortMin is the fewest events worth sorting on two goroutines:
// below it the sort takes less than starting one and splitting cost.
const parallelSortMin = 4096

// splitSamples is how many keys the split's pivot is the median of.
const splitSamples = 31

func eventByKey[T any](a, b Event[T]) int { return strings.Compare(a.Key, b.Key) }

// sortEventsOn orders a batch's events by key. A large batch, such as a
// mesh-config change's (one event per workload), is sorted on two
// goroutines when two is true (the graph may compute on two): finish
// runs after the transaction's computing is done, so the second core is
// idle then, and the sort was otherwise the writer's alone. The batch is split in place
// around a sampled median key and each side sorted on its own, so no
// second array is made. A batch's keys are distinct, so the order is the
// one a single sort gives.
func sortEventsOn[T any](events []Event[T], two bool) {
	if !two || len(events) < parallelSortMin {
		slices.SortFunc(events, eventByKey[T])
		return
	}
	lo, hi := splitEvents(events)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(lo, eventByKey[T])
	}()
	slices.SortFunc(hi, eventByKey[T])
	wg.Wait()
}

// splitEvents reorders events so that those before the pivot, the median
// of evenly spaced sample keys, come first, and returns the two parts.
func splitEvents[T any](events []Event[T]) (lo, hi []Event[T]) {
	var keys [splitSamples]string
	step := len(events) / splitSamples
	for i := range keys {
		keys[i] = events[i*step].Key
	}
	slices.Sort(keys[:])
	pivot := keys[splitSamples/2]
	n := 0
	for j := range events {
		if events[j].Key < pivot {
			events[n], events[j] = events[j], events[n]
			n++
		}
	}
	return events[:n], events[n:]
}
