package krt_test

import (
	"fmt"
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

// TestBulkFetchSeq checks FetchSeq in recomputations of many inputs at
// once, where a shared filter's memo is read in place and a filter of
// one input's own is queried: each view sees its app's services, and the
// pod itself, after a bulk recomputation and after one in which the
// services changed too, serial and parallel.
func TestBulkFetchSeq(t *testing.T) {
	const pods = 200
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprint("parallelism=", par), func(t *testing.T) {
			g := krt.NewGraph(krt.WithParallelism(par))
			if par > 1 {
				krt.ForceParallel(g)
			}
			svcs, mesh, views := seqFixture(g, pods)
			checkSeqViews(t, views, pods, "one", "")
			mesh.Set(meshConf{Domain: "two"})
			checkSeqViews(t, views, pods, "two", "")
			g.Update(func(tx *krt.Txn) {
				mesh.In(tx).Set(meshConf{Domain: "three"})
				svcs.In(tx).Set(Service{Name: "extra", Namespace: "ns", Selector: map[string]string{"app": appName(0)}})
			})
			checkSeqViews(t, views, pods, "three", "extra")
		})
	}
}

// seqFixture is memoFixture's graph read through FetchSeq: each view
// holds its domain, the names of the services selecting its pod, and its
// pod's key read back by key.
func seqFixture(g *krt.Graph, pods int) (krt.Static[Service], krt.StaticSingleton[meshConf], krt.Collection[podView]) {
	svcs, podc, mesh := memoInputs(g, pods)
	views := krt.NewCollection(g, podc, func(ctx krt.HandlerContext, p Pod) *podView {
		mc, _ := krt.FetchOne(ctx, mesh)
		v := &podView{Domain: mc.Domain}
		for s := range krt.FetchSeq(ctx, svcs, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels)) {
			v.Services = append(v.Services, s.Name)
		}
		for self := range krt.FetchSeq(ctx, podc, krt.FilterKey(p.ResourceName())) {
			v.Key = self.ResourceName()
		}
		return v
	})
	return svcs, mesh, views
}

// checkSeqViews fails unless every view of seqFixture has domain, its
// pod's key and its app's service, then extra for app 0 when not empty.
func checkSeqViews(t *testing.T, views krt.Collection[podView], pods int, domain, extra string) {
	t.Helper()
	for i := range pods {
		key := fmt.Sprintf("ns/p%03d", i)
		want := []string{appName(i % memoApps)}
		if extra != "" && i%memoApps == 0 {
			want = append(want, extra)
		}
		if v, ok := views.Get(key); !ok || v.Key != key || v.Domain != domain || !slices.Equal(v.Services, want) {
			t.Fatalf("view %s = %+v, %v; want key %s, domain %q, services %v", key, v, ok, key, domain, want)
		}
	}
}
