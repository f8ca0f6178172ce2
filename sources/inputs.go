package sources

import (
	"context"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/meshconfig"
)

// Inputs holds the collections the mesh model is derived from: the
// Kubernetes objects the sources read (of a Pod, its PodInfo), keyed as
// Key says, and the mesh config, a collection of at most one item (none
// means meshconfig.Default). The sources set the Kubernetes kinds they read; a
// kind a source cannot read (for example routes on a cluster without the
// Gateway API CRDs) is an empty, synced collection. Complete fills the
// fields nobody set.
type Inputs struct {
	Services       krt.Collection[*corev1.Service]
	Pods           krt.Collection[*PodInfo]
	Namespaces     krt.Collection[*corev1.Namespace]
	EndpointSlices krt.Collection[*discoveryv1.EndpointSlice]
	Nodes          krt.Collection[*corev1.Node]
	ConfigMaps     krt.Collection[*corev1.ConfigMap]
	HTTPRoutes     krt.Collection[*gatewayv1.HTTPRoute]
	GRPCRoutes     krt.Collection[*gatewayv1.GRPCRoute]
	// PeerAuthentications and AuthorizationPolicies are Istio's security
	// policies (security.istio.io/v1).
	PeerAuthentications   krt.Collection[*securityv1.PeerAuthentication]
	AuthorizationPolicies krt.Collection[*securityv1.AuthorizationPolicy]
	MeshConfig            krt.Collection[meshconfig.MeshConfig]
	// StaleClusters are the remote clusters whose objects above are their
	// last known state, keyed by name (sources/multicluster sets it).
	StaleClusters krt.Collection[StaleCluster]
}

// inputKinds lists every field of Inputs once, with the name its
// collections take ("<prefix>/<name>"); every operation over all the
// inputs (Complete, JoinInputs, Synced, NewStaticInputs and its writes)
// goes through it. A new field needs a line here and nothing else in this
// package.
var inputKinds = []inputKind{
	objectKind("services", func(in *Inputs) *krt.Collection[*corev1.Service] { return &in.Services }),
	clusterKind("pods", func(in *Inputs) *krt.Collection[*PodInfo] { return &in.Pods }),
	objectKind("namespaces", func(in *Inputs) *krt.Collection[*corev1.Namespace] { return &in.Namespaces }),
	clusterKind("endpointslices", func(in *Inputs) *krt.Collection[*discoveryv1.EndpointSlice] { return &in.EndpointSlices }),
	clusterKind("nodes", func(in *Inputs) *krt.Collection[*corev1.Node] { return &in.Nodes }),
	objectKind("configmaps", func(in *Inputs) *krt.Collection[*corev1.ConfigMap] { return &in.ConfigMaps }),
	objectKind("httproutes", func(in *Inputs) *krt.Collection[*gatewayv1.HTTPRoute] { return &in.HTTPRoutes }),
	objectKind("grpcroutes", func(in *Inputs) *krt.Collection[*gatewayv1.GRPCRoute] { return &in.GRPCRoutes }),
	objectKind("peerauthentications", func(in *Inputs) *krt.Collection[*securityv1.PeerAuthentication] { return &in.PeerAuthentications }),
	objectKind("authorizationpolicies", func(in *Inputs) *krt.Collection[*securityv1.AuthorizationPolicy] { return &in.AuthorizationPolicies }),
	singletonKind("meshconfig", func(in *Inputs) *krt.Collection[meshconfig.MeshConfig] { return &in.MeshConfig }),
	namedKind("staleclusters", func(in *Inputs) *krt.Collection[StaleCluster] { return &in.StaleClusters }),
}

// Complete returns in with every field that is nil set to an empty, synced
// static collection named prefix+"/"+kind (for example "empty/meshconfig"),
// so a source or a test sets only the kinds it has. g is the graph or a
// sub-graph of it.
func (in Inputs) Complete(g krt.Owner, prefix string) Inputs {
	for _, k := range inputKinds {
		if !k.isSet(&in) {
			k.setStatic(g, &in, prefix)
		}
	}
	return in
}

// Synced returns the synced channel of every collection, in field order,
// for a readiness check. It panics on a nil field (see Complete).
func (in Inputs) Synced() []<-chan struct{} {
	out := make([]<-chan struct{}, len(inputKinds))
	for i, k := range inputKinds {
		out[i] = k.synced(&in)
	}
	return out
}

// WaitSynced blocks until every collection has synced, and returns
// ctx.Err() if ctx ends first.
func (in Inputs) WaitSynced(ctx context.Context) error {
	for _, ch := range in.Synced() {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// HasSynced reports whether every collection has synced.
func (in Inputs) HasSynced() bool {
	for _, ch := range in.Synced() {
		select {
		case <-ch:
		default:
			return false
		}
	}
	return true
}

// JoinInputs returns Inputs whose collections hold the items of a and b;
// where both hold a key, a's item wins. Typical use: a is a folder of local
// overrides, b the cluster. Both must be complete (see Complete).
func JoinInputs(g *krt.Graph, a, b Inputs) Inputs {
	var out Inputs
	for _, k := range inputKinds {
		k.join(g, &out, &a, &b)
	}
	return out
}
