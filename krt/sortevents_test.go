package krt

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortEventsOnTwoMatchesOne checks that the two-goroutine sort gives
// the order of one sort, for shuffled, sorted, reversed and skewed keys,
// and that each event keeps its own values.
func TestSortEventsOnTwoMatchesOne(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3 * parallelSortMin
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%d", i%97, i)
	}
	orders := map[string]func([]string){
		"shuffled": func(k []string) { r.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] }) },
		"sorted":   func(k []string) { slices.Sort(k) },
		"reversed": func(k []string) { slices.Sort(k); slices.Reverse(k) },
		// The sampled keys all sort first: the split leaves one side empty.
		"skewed": func(k []string) {
			slices.Sort(k)
			step := len(k) / splitSamples
			for i := 0; i < splitSamples; i++ {
				k[i], k[i*step] = k[i*step], k[i]
			}
			slices.SortFunc(k[:splitSamples], strings.Compare)
			slices.Reverse(k[splitSamples:])
		},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			order(keys)
			one, two := eventsFor(keys), eventsFor(keys)
			sortEventsOn(one, false)
			sortEventsOn(two, true)
			if !slices.IsSortedFunc(two, eventByKey[int]) {
				t.Fatal("two-goroutine sort: events not in key order")
			}
			for i := range one {
				if one[i].Key != two[i].Key || *two[i].New != *one[i].New {
					t.Fatalf("event %d: %q=%d, want %q=%d", i, two[i].Key, *two[i].New, one[i].Key, *one[i].New)
				}
			}
		})
	}
}

// TestPrefixSortMatchesPlainSort checks the prefix sort against a plain
// sort of keys the prefixes cannot tell apart: longer than 16 bytes with
// a shared start, one the prefix of another, zero bytes where the
// padding is, and bytes above 0x7f.
func TestPrefixSortMatchesPlainSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	var keys []string
	for len(keys) < 2*prefixSortMin {
		var k string
		switch r.IntN(4) {
		case 0:
			k = fmt.Sprintf("istio-system/reviews-v%d-%d", r.IntN(3), r.IntN(1000))
		case 1:
			k = "a" + strings.Repeat("\x00", r.IntN(20))
		case 2:
			k = strings.Repeat("b", 14+r.IntN(4)) + string(rune(0x80+r.IntN(300)))
		default:
			k = fmt.Sprint(r.IntN(100000))
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, two := range []bool{false, true} {
		events := eventsFor(keys)
		sortEventsOn(events, two)
		want := slices.Clone(keys)
		slices.Sort(want)
		for i, e := range events {
			if e.Key != want[i] || keys[*e.New] != e.Key {
				t.Fatalf("two=%v: event %d is %q (value %d), want %q", two, i, e.Key, *e.New, want[i])
			}
		}
	}
}

// eventsFor makes an add per key whose value is the key's position.
func eventsFor(keys []string) []Event[int] {
	events := make([]Event[int], len(keys))
	for i, k := range keys {
		v := i
		events[i] = Event[int]{Type: EventAdd, Key: k, New: &v}
	}
	return events
}

func TestSplitEvents(t *testing.T) {
	keys := make([]string, parallelSortMin)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%05d", (i*7919)%len(keys))
	}
	lo, hi := splitAround(eventsFor(keys), eventByKey[int])
	if len(lo)+len(hi) != len(keys) || len(lo) == 0 || len(hi) == 0 {
		t.Fatalf("split %d events into %d and %d", len(keys), len(lo), len(hi))
	}
	first := slices.MinFunc(hi, eventByKey[int]).Key
	if last := slices.MaxFunc(lo, eventByKey[int]).Key; last >= first {
		t.Fatalf("low side's largest key %q is not before high side's smallest %q", last, first)
	}
}

// BenchmarkSortEvents sorts a mesh-config change's batch (10,000 events
// in build order) on one goroutine and on two.
func BenchmarkSortEvents(b *testing.B) {
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%d", i%1000, i)
	}
	for _, two := range []bool{false, true} {
		b.Run(fmt.Sprint("two=", two), func(b *testing.B) {
			events := eventsFor(keys)
			for b.Loop() {
				b.StopTimer()
				for i, k := range keys {
					events[i].Key = k
				}
				b.StartTimer()
				sortEventsOn(events, two)
			}
		})
	}
}
