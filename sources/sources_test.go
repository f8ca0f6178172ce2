package sources_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

func svc(ns, name, rv string, port int32, sel map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv},
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: port}}},
	}
}

func TestKey(t *testing.T) {
	if got := sources.Key(svc("ns", "web", "", 80, nil)); got != "ns/web" {
		t.Errorf("namespaced key %q", got)
	}
	if got := sources.Key(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}); got != "n1" {
		t.Errorf("cluster-scoped key %q", got)
	}
}

func TestEqual(t *testing.T) {
	a := svc("ns", "web", "7", 80, nil)
	tests := []struct {
		name string
		b    *corev1.Service
		want bool
	}{
		{"same pointer", a, true},
		{"same resource version, content ignored", svc("ns", "web", "7", 81, nil), true},
		{"other resource version, same content", svc("ns", "web", "8", 80, nil), false},
		{"no resource version, same content", svc("ns", "web", "", 80, nil), false},
		{"semantic: empty and nil selector", svc("ns", "web", "7", 80, map[string]string{}), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sources.Equal(a, tc.b); got != tc.want {
				t.Errorf("Equal = %v, want %v", got, tc.want)
			}
		})
	}
	x, y := svc("ns", "web", "", 80, nil), svc("ns", "web", "", 80, map[string]string{})
	if !sources.Equal(x, y) {
		t.Error("without resource versions, semantically equal objects differ")
	}
	if sources.Equal(x, svc("ns", "web", "", 81, nil)) {
		t.Error("different ports compare equal")
	}
}

func TestJoinInputs(t *testing.T) {
	g := krt.NewGraph()
	folder := sources.NewStaticInputs(g, "folder")
	cluster := sources.NewStaticInputs(g, "cluster", krt.WithUnsynced())
	in := sources.JoinInputs(g, folder.Inputs(), cluster.Inputs())
	folder.Set(svc("ns", "web", "", 8080, map[string]string{"app": "web"}))
	cluster.Set(svc("ns", "web", "1", 80, map[string]string{"app": "web"}), svc("ns", "api", "2", 90, map[string]string{"app": "api"}))
	if in.Services.HasSynced() || in.HasSynced() {
		t.Error("joined collection synced before the cluster")
	}
	cluster.MarkSynced()
	if !in.Services.HasSynced() || !in.Pods.HasSynced() || !in.HasSynced() {
		t.Error("joined collections not synced")
	}
	if web, _ := in.Services.Get("ns/web"); web.Spec.Ports[0].Port != 8080 {
		t.Errorf("folder did not win: %d", web.Spec.Ports[0].Port)
	}
	// The joined collection keeps the Service selector for FilterSelects.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "api"}}}
	cluster.Set(pod)
	selected := krt.NewCollection(g, in.Pods, func(ctx krt.HandlerContext, p *sources.PodInfo) *string {
		s, ok := krt.FetchOne(ctx, in.Services, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		if !ok {
			return nil
		}
		return &s.Name
	}, krt.WithKey(func(s string) string { return s }))
	if got := selected.List(); len(got) != 1 || got[0] != "api" {
		t.Errorf("pod selected by %v", got)
	}
}
