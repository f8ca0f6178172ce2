package kube

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/meshd/meshd/krt"
)

// WithName prefixes every collection's name, so two sources (two
// clusters) can share one graph and be told apart in it.
func TestWithName(t *testing.T) {
	g := krt.NewGraph()
	east := New(g, Clients{Kube: fake.NewClientset()}, WithName("east"))
	west := New(g, Clients{Kube: fake.NewClientset()})
	if got := east.Inputs().Services.Name(); got != "east/services" {
		t.Errorf("east services %q", got)
	}
	if got := west.Inputs().Pods.Name(); got != "kube/pods" {
		t.Errorf("default pods %q", got)
	}
	names := map[string]bool{}
	for _, c := range g.Describe().Collections {
		names[c.Name] = true
	}
	for _, want := range []string{"east/services", "east/pods", "east/httproutes", "kube/services", "kube/pods"} {
		if !names[want] {
			t.Errorf("graph lacks %s: %v", want, names)
		}
	}
}
