package multicluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// joins are the collections of collections, one entry per joined cluster
// and kind, and the nested joins over them that the model reads.
type joins struct {
	services krt.Static[krt.Collection[*corev1.Service]]
	pods     krt.Static[krt.Collection[*sources.PodInfo]]
	slices   krt.Static[krt.Collection[*discoveryv1.EndpointSlice]]
	nodes    krt.Static[krt.Collection[*corev1.Node]]
	// stale names the joined clusters that stopped answering.
	stale  krt.Static[sources.StaleCluster]
	inputs sources.Inputs
}

// newJoins makes the joins in g. Entries are keyed by collection name,
// "remote/<cluster>/<kind>", the same for every generation of a cluster,
// so replacing a generation is one Set.
func newJoins(g *krt.Graph) *joins {
	j := &joins{
		services: krt.NewStatic[krt.Collection[*corev1.Service]](g, krt.WithName("remotes/services")),
		pods:     krt.NewStatic[krt.Collection[*sources.PodInfo]](g, krt.WithName("remotes/pods")),
		slices:   krt.NewStatic[krt.Collection[*discoveryv1.EndpointSlice]](g, krt.WithName("remotes/endpointslices")),
		nodes:    krt.NewStatic[krt.Collection[*corev1.Node]](g, krt.WithName("remotes/nodes")),
		stale:    krt.NewStatic[sources.StaleCluster](g, krt.WithName("remotes/staleclusters")),
	}
	j.inputs = sources.Inputs{
		Services:       krt.NestedJoin(g, j.services, sources.CollectionOptions[*corev1.Service]("remotes/joined/services")...),
		Pods:           nested(g, j.pods, "pods"),
		EndpointSlices: nested(g, j.slices, "endpointslices"),
		Nodes:          nested(g, j.nodes, "nodes"),
		StaleClusters:  j.stale,
	}
	return j
}

// nested joins the collections of a kind whose items are keyed by
// sources.ClusterKey.
func nested[T sources.Object](g *krt.Graph, cols krt.Collection[krt.Collection[T]], kind string) krt.Collection[T] {
	return krt.NestedJoin(g, cols, sources.CollectionOptions[T]("remotes/joined/"+kind, krt.WithKey(sources.ClusterKey[T]))...)
}

// add joins in's collections (a cluster's), replacing those of an earlier
// generation of the same cluster, in one transaction: a reader sees the
// old generation's items or the new one's, never both or neither.
func (j *joins) add(g *krt.Graph, in sources.Inputs) {
	g.Update(func(tx *krt.Txn) {
		j.services.In(tx).Set(in.Services)
		j.pods.In(tx).Set(in.Pods)
		j.slices.In(tx).Set(in.EndpointSlices)
		j.nodes.In(tx).Set(in.Nodes)
	})
}

// remove takes in's collections out of the joins, in one transaction.
func (j *joins) remove(g *krt.Graph, in sources.Inputs) {
	g.Update(func(tx *krt.Txn) {
		j.services.In(tx).Delete(in.Services.Name())
		j.pods.In(tx).Delete(in.Pods.Name())
		j.slices.In(tx).Delete(in.EndpointSlices.Name())
		j.nodes.In(tx).Delete(in.Nodes.Name())
	})
}

// markStale sets whether the joined cluster name is stale, and since when.
func (j *joins) markStale(g *krt.Graph, name string, stale bool, since time.Time) {
	g.Update(func(tx *krt.Txn) {
		if stale {
			j.stale.In(tx).Set(sources.StaleCluster{Name: name, Since: since})
		} else {
			j.stale.In(tx).Delete(name)
		}
	})
}
