package meshconfig

import (
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
)

// WithName names the singleton in the graph, so a file config and a
// ConfigMap config can live in one graph under names of their own.
func TestWithName(t *testing.T) {
	g := krt.NewGraph()
	cms := krt.NewStatic[*corev1.ConfigMap](g, krt.WithName("configmaps"),
		krt.WithKey(func(c *corev1.ConfigMap) string { return c.Namespace + "/" + c.Name }))
	file := NewFile(g, filepath.Join(t.TempDir(), "mesh.yaml"), WithName("mesh/file"))
	cm := FromConfigMap(g, cms, "meshd", "mesh", WithName("mesh/configmap"))
	plain := NewFile(g, filepath.Join(t.TempDir(), "other.yaml"))
	for _, tc := range []struct{ got, want string }{
		{file.Config().Name(), "mesh/file"},
		{cm.Config().Name(), "mesh/configmap"},
		{plain.Config().Name(), "meshconfig"},
	} {
		if tc.got != tc.want {
			t.Errorf("name %q, want %q", tc.got, tc.want)
		}
	}
	names := map[string]bool{}
	for _, c := range g.Describe().Collections {
		names[c.Name] = true
	}
	if !names["mesh/file"] || !names["mesh/configmap"] {
		t.Errorf("graph lists %v", names)
	}
}
