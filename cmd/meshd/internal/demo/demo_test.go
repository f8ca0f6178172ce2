package demo_test

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/cmd/meshd/internal/demo"
)

// TestDemoDecodesStrictly checks that every document of the embedded demo
// mesh decodes into its Kubernetes type with no unknown field, and that the
// mesh has the shape the README and docs describe.
func TestDemoDecodesStrictly(t *testing.T) {
	m := mesh{counts: map[string]int{}}
	err := fs.WalkDir(demo.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(demo.FS, path)
		if err != nil {
			return err
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			m.decode(t, path, i, doc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := m.counts
	if counts["Namespace"] != 2 || counts["Service"] < 3 || counts["Pod"] < 4 || counts["HTTPRoute"] != 1 {
		t.Errorf("demo kinds = %v, want 2 namespaces, 3+ services, 4+ pods, 1 HTTPRoute", counts)
	}
	if m.readyPods == 0 || m.readyPods == counts["Pod"] {
		t.Errorf("%d of %d pods ready, want some but not all (the demo shows an unhealthy endpoint)", m.readyPods, counts["Pod"])
	}
	if m.route == nil {
		t.Fatal("no HTTPRoute")
	}
	if p := m.route.Spec.ParentRefs[0]; p.Kind == nil || *p.Kind != "Service" {
		t.Errorf("route parentRef = %+v, want a GAMMA Service parent", p)
	}
	var weights []int32
	for _, b := range m.route.Spec.Rules[0].BackendRefs {
		weights = append(weights, *b.Weight)
	}
	if len(weights) != 2 || weights[0] != 90 || weights[1] != 10 {
		t.Errorf("route weights = %v, want [90 10]", weights)
	}
}

// mesh is what the test gathers from the demo's documents.
type mesh struct {
	counts    map[string]int // documents by kind
	route     *gatewayv1.HTTPRoute
	readyPods int
}

// decode decodes document i of path strictly by its kind and records it.
func (m *mesh) decode(t *testing.T, path string, i int, doc []byte) {
	t.Helper()
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatalf("%s doc %d: %v", path, i, err)
	}
	m.counts[meta.Kind]++
	switch meta.Kind {
	case "Namespace":
		var ns corev1.Namespace
		strict(t, path, i, doc, &ns)
	case "Service":
		var svc corev1.Service
		strict(t, path, i, doc, &svc)
		if len(svc.Spec.Selector) == 0 || len(svc.Spec.Ports) == 0 {
			t.Errorf("%s doc %d: service %s has no selector or ports", path, i, svc.Name)
		}
	case "Pod":
		var pod corev1.Pod
		strict(t, path, i, doc, &pod)
		if !strings.HasPrefix(pod.Status.PodIP, "10.") {
			t.Errorf("%s doc %d: pod %s IP %q, want a 10.x address", path, i, pod.Name, pod.Status.PodIP)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				m.readyPods++
			}
		}
	case "HTTPRoute":
		m.route = &gatewayv1.HTTPRoute{}
		strict(t, path, i, doc, m.route)
	default:
		t.Errorf("%s doc %d: unexpected kind %q", path, i, meta.Kind)
	}
}

func strict(t *testing.T, path string, i int, doc []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Errorf("%s doc %d: %v", path, i, err)
	}
}
