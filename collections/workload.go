package collections

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/meshconfig"
)

// Node labels that place a workload in a locality.
const (
	LabelTopologyRegion  = "topology.kubernetes.io/region"
	LabelTopologyZone    = "topology.kubernetes.io/zone"
	LabelTopologySubzone = "topology.istio.io/subzone"
)

// Locality is where a workload runs, from the broadest to the narrowest
// scope, and in which cluster. The zero value is the unknown locality of
// the local cluster.
type Locality struct {
	Region, Zone, SubZone string
	// Cluster is the cluster the workload runs in: a remote cluster's
	// name (sources.ClusterOf), or for the local cluster its name
	// (WithClusterName), "" by default.
	Cluster string
}

// String formats l as "region/zone/subzone", or "" when unknown, followed
// by "@cluster" for a remote cluster.
func (l Locality) String() string {
	s := ""
	if l.Region != "" || l.Zone != "" || l.SubZone != "" {
		s = l.Region + "/" + l.Zone + "/" + l.SubZone
	}
	if l.Cluster != "" {
		s += "@" + l.Cluster
	}
	return s
}

// ParseLocality parses "region/zone/subzone"; missing trailing parts are
// empty.
func ParseLocality(s string) Locality {
	parts := strings.SplitN(s, "/", 3)
	var l Locality
	for i, p := range parts {
		switch i {
		case 0:
			l.Region = p
		case 1:
			l.Zone = p
		case 2:
			l.SubZone = p
		}
	}
	return l
}

// nodeLocality reads a locality from node topology labels; ok is false
// when the node carries none.
func nodeLocality(labels map[string]string) (Locality, bool) {
	l := Locality{
		Region:  labels[LabelTopologyRegion],
		Zone:    labels[LabelTopologyZone],
		SubZone: labels[LabelTopologySubzone],
	}
	return l, l != Locality{}
}

// Workload is the mesh's view of a pod.
type Workload struct {
	Name      string
	Namespace string
	// Cluster is the remote cluster the pod runs in; "" for the local
	// cluster.
	Cluster string
	// IP is the pod's primary IP; empty until the pod is scheduled and
	// networked, and such a workload is no endpoint.
	IP string
	// Labels is the PodInfo's map, which pods of equal labels share
	// (sources.NewPodInfo): like every item, read-only.
	Labels         map[string]string
	ServiceAccount string
	// Node is the name of the node the pod runs on.
	Node string
	// Ready is true when the pod is Running, its Ready condition is True
	// and it is not being deleted.
	Ready bool
	// Locality comes from the node's topology labels, else the mesh
	// config's DefaultLocality.
	Locality Locality
	// Services are the keys ("namespace/name") of the services selecting
	// the workload, sorted.
	Services []string
	// NamedPorts maps the names of the pod's TCP container ports to their
	// numbers, to resolve service target ports given by name.
	NamedPorts map[string]int32
}

// ResourceName returns "namespace/name", or "cluster/namespace/name" for a
// pod of a remote cluster (as sources.ClusterKey keys the pod).
func (w Workload) ResourceName() string {
	if w.Cluster != "" {
		return w.Cluster + "/" + w.Namespace + "/" + w.Name
	}
	return w.Namespace + "/" + w.Name
}

// GetNamespace returns the workload's namespace.
func (w Workload) GetNamespace() string { return w.Namespace }

// GetLabels returns the pod's labels, so FilterLabels finds the workloads
// a service selects.
func (w Workload) GetLabels() map[string]string { return w.Labels }

// Equals reports whether w and o are the same.
func (w Workload) Equals(o Workload) bool {
	return w.Name == o.Name && w.Namespace == o.Namespace && w.Cluster == o.Cluster && w.IP == o.IP &&
		maps.Equal(w.Labels, o.Labels) && w.ServiceAccount == o.ServiceAccount &&
		w.Node == o.Node && w.Ready == o.Ready && w.Locality == o.Locality &&
		slices.Equal(w.Services, o.Services) && maps.Equal(w.NamedPorts, o.NamedPorts)
}

// podReady reports whether a pod can serve: Running, Ready=True, and not
// terminating.
func podReady(pod *sources.PodInfo) bool {
	return pod.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil && pod.Ready
}

func newWorkloads(g *krt.Graph, pods krt.Collection[*sources.PodInfo], nodes krt.Collection[*corev1.Node],
	services krt.Collection[ServiceInfo], mesh krt.Collection[meshconfig.MeshConfig], clusterName string) krt.Collection[Workload] {
	return krt.NewCollection(g, pods, func(ctx krt.HandlerContext, pod *sources.PodInfo) *Workload {
		// A finished pod's IP may already belong to another pod.
		if pod.Phase == corev1.PodSucceeded || pod.Phase == corev1.PodFailed {
			return nil
		}
		w := &Workload{
			Name:           pod.Name,
			Namespace:      pod.Namespace,
			Cluster:        sources.ClusterOf(pod),
			IP:             pod.IP,
			Labels:         pod.Labels,
			ServiceAccount: cmp.Or(pod.ServiceAccount, "default"),
			Node:           pod.Node,
			Ready:          podReady(pod),
			// Shared with the PodInfo, which no one changes.
			NamedPorts: pod.NamedPorts,
		}
		w.Locality = workloadLocality(ctx, nodes, mesh, w.Cluster, w.Node)
		w.Locality.Cluster = cmp.Or(w.Cluster, clusterName)
		for _, s := range krt.Fetch(ctx, services, krt.FilterNamespace(pod.Namespace), krt.FilterSelects(pod.Labels)) {
			w.Services = append(w.Services, s.ResourceName())
		}
		return w
	}, krt.WithName("Workloads"))
}

// workloadLocality is the locality of a node's labels, else the mesh
// default, in the node's cluster.
func workloadLocality(ctx krt.HandlerContext, nodes krt.Collection[*corev1.Node], mesh krt.Collection[meshconfig.MeshConfig], cluster, node string) Locality {
	l, ok := fetchNodeLocality(ctx, nodes, cluster, node)
	if !ok {
		l = ParseLocality(fetchMesh(ctx, mesh).DefaultLocality)
	}
	l.Cluster = cluster
	return l
}

// fetchNodeLocality returns the locality of a node's topology labels, if
// the node is known and has some.
func fetchNodeLocality(ctx krt.HandlerContext, nodes krt.Collection[*corev1.Node], cluster, node string) (Locality, bool) {
	if node == "" {
		return Locality{}, false
	}
	// Nodes are cluster-scoped: accept "name" and "/name" keys alike; a
	// remote cluster's are "cluster/name" (sources.ClusterKey).
	keys := krt.FilterKeys(node, "/"+node)
	if cluster != "" {
		keys = krt.FilterKey(cluster + "/" + node)
	}
	if n, ok := krt.FetchOne(ctx, nodes, keys); ok {
		return nodeLocality(n.Labels)
	}
	return Locality{}, false
}
