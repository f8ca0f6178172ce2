package collections

import (
	"cmp"
	"maps"
	"time"

	typev1beta1 "istio.io/api/type/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PolicyScope says which workloads an Istio security policy applies to,
// as Istio decides it: a policy with a workload selector applies to the
// workloads of its namespace whose labels match; one without applies to
// every workload of its namespace, or of the mesh when its namespace is
// the mesh config's root namespace.
type PolicyScope struct {
	Namespace string
	Name      string
	// Selector holds the workload selector's labels; nil (also for an
	// empty selector) selects the whole namespace or mesh.
	Selector map[string]string
	// MeshWide is true for a selector-less policy in the root namespace.
	MeshWide bool
	// Created orders policies of the same level: the oldest wins.
	Created time.Time
	// Generation is the policy object's, which a status written about
	// this view of it observes.
	Generation int64
}

// Index keys of the scope index of a policy collection.
const meshScopeKey = "mesh"

func namespaceScopeKey(ns string) string { return "ns/" + ns }

// scopeKeys files a policy without a selector under meshScopeKey or its
// namespace's key, so a workload reads the broad policies through an index
// and the selector policies through FilterSelects, and a change to one
// policy recomputes only the workloads it applies to.
func (s PolicyScope) scopeKeys() []string {
	switch {
	case s.Selector != nil:
		return nil
	case s.MeshWide:
		return []string{meshScopeKey}
	}
	return []string{namespaceScopeKey(s.Namespace)}
}

func (s PolicyScope) equal(o PolicyScope) bool {
	return s.Namespace == o.Namespace && s.Name == o.Name && s.MeshWide == o.MeshWide &&
		s.Created.Equal(o.Created) && s.Generation == o.Generation && maps.Equal(s.Selector, o.Selector)
}

// newPolicyScope reads the scope of a policy.
func newPolicyScope(obj metav1.Object, sel *typev1beta1.WorkloadSelector, rootNamespace string) PolicyScope {
	ns := obj.GetNamespace()
	s := PolicyScope{Namespace: ns, Name: obj.GetName(), Created: obj.GetCreationTimestamp().Time, Generation: obj.GetGeneration()}
	if len(sel.GetMatchLabels()) > 0 {
		s.Selector = maps.Clone(sel.GetMatchLabels())
	}
	s.MeshWide = s.Selector == nil && ns == rootNamespace
	return s
}

// olderFirst orders policies as Istio resolves conflicts between policies
// of one level: by creation time, then namespace and name.
func olderFirst(a, b PolicyScope) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
