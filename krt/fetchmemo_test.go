package krt_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshd/meshd/krt"
)

type meshConf struct{ Domain string }

// memoApps is how many apps memoFixture's pods are spread over: few pods
// an app, as reads share a filter only in a small bucket.
const memoApps = 20

func appName(a int) string { return fmt.Sprintf("app%02d", a) }

type podView struct {
	Key, Domain string
	Services    []string
}

func (v podView) ResourceName() string { return v.Key }

// memoInputs makes pods pods in memoApps apps, each pod with a label map
// of its own, a service selecting each app, and the mesh config.
func memoInputs(g *krt.Graph, pods int) (krt.Static[Service], krt.Static[Pod], krt.StaticSingleton[meshConf]) {
	svcs := krt.NewStatic[Service](g)
	for a := range memoApps {
		svcs.Set(Service{Name: appName(a), Namespace: "ns", Selector: map[string]string{"app": appName(a)}})
	}
	podc := krt.NewStatic[Pod](g)
	for i := range pods {
		podc.Set(Pod{Name: fmt.Sprintf("p%03d", i), Namespace: "ns", Labels: map[string]string{"app": appName(i % memoApps)}})
	}
	mesh := krt.NewStaticSingleton(g, &meshConf{Domain: "one"})
	return svcs, podc, mesh
}

// memoFixture makes pods pods in memoApps apps, each pod with a label map
// of its own, a service selecting each app, and a view of each pod that
// reads the mesh config and the services selecting it. scribble makes
// each computation overwrite the fetched list once done with it.
func memoFixture(g *krt.Graph, pods int, scribble bool) (krt.Static[Service], krt.StaticSingleton[meshConf], krt.Collection[podView]) {
	svcs, podc, mesh := memoInputs(g, pods)
	views := krt.NewCollection(g, podc, func(ctx krt.HandlerContext, p Pod) *podView {
		mc, _ := krt.FetchOne(ctx, mesh)
		v := &podView{Key: p.ResourceName(), Domain: mc.Domain}
		got := krt.Fetch(ctx, svcs, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		for _, s := range got {
			v.Services = append(v.Services, s.Name)
		}
		if scribble {
			for i := range got {
				got[i] = Service{Name: "scribbled"}
			}
		}
		return v
	})
	return svcs, mesh, views
}

// checkViews fails unless every view has domain and the services whose
// selectors select its pod's labels: its app's, and those moved gives by
// app.
func checkViews(t *testing.T, views krt.Collection[podView], pods int, domain string, moved map[string][]string) {
	t.Helper()
	for i := range pods {
		key := fmt.Sprintf("ns/p%03d", i)
		v, ok := views.Get(key)
		app := appName(i % memoApps)
		want, ok2 := moved[app]
		if !ok2 {
			want = []string{app}
		}
		if !ok || v.Domain != domain || !slices.Equal(v.Services, want) {
			t.Fatalf("view %s = %+v, %v; want domain %q, services %v", key, v, ok, domain, want)
		}
	}
}

// TestBulkRecomputationSharesQueries checks that when a change recomputes
// many inputs whose reads share a filter, the fetch reuses the filter's
// last result while the fetched collection is unchanged, queries again
// when it changed in the same transaction, and hands each caller a list
// of its own, in serial and parallel modes.
func TestBulkRecomputationSharesQueries(t *testing.T) {
	const pods = 200 // above the bulk threshold
	for _, mode := range []struct {
		name string
		g    func() *krt.Graph
	}{
		{"serial", func() *krt.Graph { return krt.NewGraph(krt.WithParallelism(1)) }},
		{"parallel", func() *krt.Graph { g := krt.NewGraph(krt.WithParallelism(4)); krt.ForceParallel(g); return g }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			g := mode.g()
			svcs, mesh, views := memoFixture(g, pods, true)
			checkViews(t, views, pods, "one", nil)
			if n := krt.QueryMemos[Pod](views); n != 0 {
				t.Fatalf("%d inputs hold a query memo after the build, want none", n)
			}

			mesh.Set(meshConf{Domain: "two"}) // every view recomputes, services unchanged
			checkViews(t, views, pods, "two", nil)
			if n := krt.QueryMemos[Pod](views); n != pods {
				t.Fatalf("%d inputs hold a query memo after a bulk recomputation, want %d", n, pods)
			}

			// The services change in the transaction that recomputes every
			// view: the memo of the last one must not answer.
			g.Update(func(tx *krt.Txn) {
				mesh.In(tx).Set(meshConf{Domain: "three"})
				svcs.In(tx).Set(Service{Name: appName(1), Namespace: "ns", Selector: map[string]string{"app": appName(0)}})
			})
			moved := map[string][]string{appName(0): {appName(0), appName(1)}, appName(1): nil}
			checkViews(t, views, pods, "three", moved)

			mesh.Set(meshConf{Domain: "four"})
			checkViews(t, views, pods, "four", moved)
		})
	}
}

// TestSmallRecomputationKeepsNoMemo checks that a change recomputing few
// inputs neither uses nor makes a query memo: it would cost a copy that
// no other input reads.
func TestSmallRecomputationKeepsNoMemo(t *testing.T) {
	g := krt.NewGraph(krt.WithParallelism(1))
	_, mesh, views := memoFixture(g, 20, false)
	mesh.Set(meshConf{Domain: "two"})
	checkViews(t, views, 20, "two", nil)
	if n := krt.QueryMemos[Pod](views); n != 0 {
		t.Fatalf("%d inputs hold a query memo after recomputing 20, want none", n)
	}
}

// TestSharedFilterLearnsEachPodsMap checks that the reads of pods whose
// label maps are equal but their own share one filter, which learns the
// other maps as aliases when they are filed, and that a recomputation of
// them all still finds each pod's services.
func TestSharedFilterLearnsEachPodsMap(t *testing.T) {
	const pods = 200
	g := krt.NewGraph()
	_, mesh, views := memoFixture(g, pods, false)
	if n := krt.SelectAliases[Pod](views); n != pods-memoApps {
		t.Fatalf("%d aliases learned, want %d: one per pod but the first of each app", n, pods-memoApps)
	}
	mesh.Set(meshConf{Domain: "two"})
	checkViews(t, views, pods, "two", nil)
}
