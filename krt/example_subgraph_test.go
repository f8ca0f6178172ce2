package krt_test

import (
	"fmt"

	"github.com/meshd/meshd/krt"
)

// ExampleNestedJoin joins the pods of clusters that come and go: each
// cluster's collections live in a sub-graph, listed in a collection of
// collections.
func ExampleNestedJoin() {
	g := krt.NewGraph()
	clusters := krt.NewStatic[krt.Collection[Pod]](g) // keyed by collection name
	all := krt.NestedJoin(g, clusters)

	addCluster := func(name string, pods ...Pod) *krt.SubGraph {
		sub := g.NewSubGraph(name)
		in := krt.NewStatic[Pod](sub, krt.WithName(name+"/pods"))
		in.Set(pods...)
		clusters.Set(in)
		return sub
	}
	east := addCluster("east", Pod{Name: "a", Namespace: "x"})
	addCluster("west", Pod{Name: "b", Namespace: "x"})
	fmt.Println(all.Len())

	clusters.Delete("east/pods") // the cluster leaves the join...
	east.Stop()                  // ...and its collections the graph
	for _, p := range all.List() {
		fmt.Println(p.ResourceName())
	}
	// Output:
	// 2
	// x/b
}

func ExampleSubGraph_Stop() {
	g := krt.NewGraph()
	tenant := g.NewSubGraph("tenant-1")
	pods := krt.NewStatic[Pod](tenant, krt.WithName("tenant-1/pods"))
	pods.Set(Pod{Name: "a", Namespace: "x"})
	// A collection outside the sub-graph that reads it.
	count := krt.NewSingleton(g, func(ctx krt.HandlerContext) *Num {
		return &Num{Key: "pods", N: len(krt.Fetch(ctx, pods))}
	})
	before := len(g.Describe().Collections)
	tenant.Stop() // empties, then removes, everything created in tenant
	n, _ := count.Value()
	fmt.Println(before, len(g.Describe().Collections), n.N)
	// Output: 2 1 0
}
