package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/sources"
)

// meshConfigMap is a ConfigMap holding mesh, a mesh config in YAML.
func meshConfigMap(ns, name, mesh string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"mesh": mesh}}
}

// TestMeshConfigMapEndToEnd runs meshd against a real kube-apiserver with
// --mesh-config-map: the ConfigMap's edits change what is served, a bad
// one keeps the last good config and shows as a problem, and no other
// ConfigMap is watched.
func TestMeshConfigMapEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, client := startKube(t, ctx)
	const ns = "meshd-app-meshconfig"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := client.CoreV1().ConfigMaps(ns)
	for _, cm := range []*corev1.ConfigMap{meshConfigMap(ns, "mesh", "domainSuffix: one.test\n"), meshConfigMap(ns, "other", "domainSuffix: other.test\n")} {
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg, err := ParseFlags([]string{"--kubeconfig", env.Kubeconfig, "--mesh-config-map", ns + "/mesh",
		"--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	cluster := func(suffix string) string { return "outbound|80||web." + ns + ".svc." + suffix }
	ads := newADSClient(t, r.app.XDSAddr())
	ads.until("named after the ConfigMap's domain suffix", func(n []string) bool { return slices.Contains(n, cluster("one.test")) })
	if got := r.app.model.Inputs.ConfigMaps.List(); len(got) != 1 || sources.Key(got[0]) != ns+"/mesh" {
		t.Errorf("watched ConfigMaps %v, want %s/mesh alone", got, ns)
	}

	update := func(mesh string) {
		t.Helper()
		if _, err := cms.Update(ctx, meshConfigMap(ns, "mesh", mesh), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update("domainSuffix: two.test\n")
	ads.until("renamed by the edit", func(n []string) bool {
		return slices.Contains(n, cluster("two.test")) && !slices.Contains(n, cluster("one.test"))
	})

	checkBadMeshConfigMap(t, r, ns, update, cluster("two.test"))

	if err := cms.Delete(ctx, "mesh", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ads.until("back to the defaults without the ConfigMap", func(n []string) bool { return slices.Contains(n, cluster("cluster.local")) })
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// checkBadMeshConfigMap makes the ConfigMap invalid through update: the
// problem shows in the debug UI, meshd stays ready and serves want, the
// last good config's cluster; fixed, the problem clears.
func checkBadMeshConfigMap(t *testing.T, r *running, ns string, update func(string), want string) {
	t.Helper()
	update("domainSuffix: .bad.\n")
	r.waitProblem(t, "the ConfigMap's problem", "configmap "+ns+"/mesh", "domainSuffix")
	if code, _ := r.get(t, "/readyz"); code != 200 {
		t.Errorf("/readyz = %d after a bad ConfigMap, want 200", code)
	}
	if names := newADSClient(t, r.app.XDSAddr()).clusters(); !slices.Contains(names, want) {
		t.Errorf("after a bad ConfigMap, clusters = %v, want %s kept", names, want)
	}
	update("domainSuffix: " + strings.SplitN(want, ".svc.", 2)[1] + "\n")
	waitFor(t, "the problem to clear", func() (string, bool) {
		_, body := r.get(t, "/debug/api/problems")
		return body, !strings.Contains(body, "configmap "+ns+"/mesh")
	})
}

// TestMeshConfigMapInFolder reads --mesh-config-map from --config-dir,
// which needs no cluster: edits of the manifest reach the model too.
func TestMeshConfigMapInFolder(t *testing.T) {
	const manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh\n  namespace: meshd\ndata:\n  mesh: |\n    domainSuffix: %s\n"
	// The demo mesh, which startDir copies, holds reviews.shop.
	r, dir := startDir(t, map[string]string{"mesh.yaml": fmt.Sprintf(manifest, "folder.test")},
		func(c *Config) { c.MeshConfigMap = "meshd/mesh" })
	ads := newADSClient(t, r.app.XDSAddr())
	ads.until("named after the folder's ConfigMap", func(n []string) bool {
		return slices.Contains(n, "outbound|9080||reviews.shop.svc.folder.test")
	})
	writeFile(t, filepath.Join(dir, "mesh.yaml"), fmt.Sprintf(manifest, "edited.test"))
	ads.until("renamed by the edit", func(n []string) bool {
		return slices.Contains(n, "outbound|9080||reviews.shop.svc.edited.test")
	})
}
