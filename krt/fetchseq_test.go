package krt_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/meshd/meshd/krt"
)

// TestFetchSeqMatchesFetch: for each filter, FetchSeq yields what Fetch
// returns, in its order; a loop that breaks early ends the read; and the
// dependency is the same: a change to a fetched item recomputes.
func TestFetchSeqMatchesFetch(t *testing.T) {
	g, pods := newStatic[Pod]()
	pods.Set(Pod{Name: "c", Namespace: "a", Labels: map[string]string{"app": "x"}},
		Pod{Name: "a", Namespace: "a", Labels: map[string]string{"app": "x"}},
		Pod{Name: "b", Namespace: "b", Labels: map[string]string{"app": "y"}},
		Pod{Name: "d", Namespace: "a"})
	filters := map[string][]krt.Filter{
		"none":      nil,
		"namespace": {krt.FilterNamespace("a")},
		"labels":    {krt.FilterLabels(map[string]string{"app": "x"})},
		"key":       {krt.FilterKey("b/b")},
		"nothing":   {krt.FilterNamespace("z")},
	}
	for name, fs := range filters {
		t.Run(name, func(t *testing.T) {
			type result struct{ fetched, seq, first []string }
			c := krt.NewSingleton(g, func(ctx krt.HandlerContext) *result {
				r := &result{fetched: []string{}, seq: []string{}, first: []string{}}
				for _, p := range krt.Fetch(ctx, pods, fs...) {
					r.fetched = append(r.fetched, p.ResourceName()+"="+p.IP)
				}
				for p := range krt.FetchSeq(ctx, pods, fs...) {
					r.seq = append(r.seq, p.ResourceName()+"="+p.IP)
				}
				for p := range krt.FetchSeq(ctx, pods, fs...) {
					r.first = append(r.first, p.ResourceName())
					break
				}
				return r
			})
			check := func(when string) {
				t.Helper()
				r, _ := c.Value()
				if !reflect.DeepEqual(r.fetched, r.seq) || len(r.first) > 1 || (len(r.seq) > 0) != (len(r.first) == 1) {
					t.Fatalf("%s: Fetch %v, FetchSeq %v, first of FetchSeq %v", when, r.fetched, r.seq, r.first)
				}
			}
			// A reader through FetchSeq alone depends on what it read.
			onlySeq := krt.NewSingleton(g, func(ctx krt.HandlerContext) *[]string {
				ips := []string{}
				for p := range krt.FetchSeq(ctx, pods, fs...) {
					ips = append(ips, p.IP)
				}
				return &ips
			})
			check("built")
			p, _ := pods.Get("a/a")
			p.IP = "10.0.0." + name
			pods.Set(p)
			check("after a change to a/a")
			r, _ := c.Value()
			if ips, _ := onlySeq.Value(); len(ips) != len(r.fetched) || slices.Contains(r.seq, "a/a="+p.IP) != slices.Contains(ips, p.IP) {
				t.Fatalf("FetchSeq alone saw %v after the change, Fetch %v", ips, r.fetched)
			}
		})
	}
}
