package folder

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshd/meshd/sources/internal/testcrd"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

func podYAML(ns, name, app string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n  labels: {app: %s}\nspec:\n  containers: [{name: c, image: x}]\nstatus: {podIP: 10.0.0.1}\n", name, ns, app)
}

func serviceYAML(ns, name, app string, port int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  selector: {app: %s}\n  ports: [{port: %d}]\n", name, ns, app, port)
}

func keysOf[T any](c krt.Collection[T], key func(T) string) string {
	var ks []string
	for _, it := range c.List() {
		ks = append(ks, key(it))
	}
	return strings.Join(ks, ",")
}

func TestLoadFS(t *testing.T) {
	fsys := loadFSTree()
	g := krt.NewGraph()
	s := NewFS(g, fsys)
	in := s.Inputs()
	if in.Pods.HasSynced() {
		t.Fatal("synced before Load")
	}
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	if !in.HasSynced() || !s.Unstructured().HasSynced() {
		t.Error("not synced after Load")
	}
	if got := keysOf(in.Pods, sources.Key); got != "shop/db-1,shop/web-1" {
		t.Errorf("pods %s", got)
	}
	if got := keysOf(in.Services, sources.Key); got != "shop/web" {
		t.Errorf("services %s", got)
	}
	if got := keysOf(in.Namespaces, sources.Key); got != "shop" {
		t.Errorf("namespaces %s", got)
	}
	if in.HTTPRoutes.Len() != 1 || in.GRPCRoutes.Len() != 1 || in.ConfigMaps.Len() != 1 {
		t.Errorf("routes %d/%d configmaps %d", in.HTTPRoutes.Len(), in.GRPCRoutes.Len(), in.ConfigMaps.Len())
	}
	if _, ok := s.Unstructured().Get("Widget.example.com/shop/w"); !ok {
		t.Errorf("widget not kept as unstructured: %v", s.Unstructured().List())
	}
	probs := s.Problems()
	if len(probs) != 2 || probs[0].Path != "other/broken.yaml" || probs[0].Severity != SeverityError ||
		probs[1].Path != "other/widget.yaml" || probs[1].Severity != SeverityWarning {
		t.Errorf("problems %v", probs)
	}
	st := s.Stats()
	if st.Files != 7 || st.FailingFiles != 1 || st.Objects != 8 || st.Loads != 1 || st.FileErrors != 1 {
		t.Errorf("stats %+v", st)
	}
	checkSelectorIndex(t, g, in)
}

// A Pod manifest is checked as the full Pod and stored as its PodInfo.
func TestPodStoredAsPodInfo(t *testing.T) {
	fsys := fstest.MapFS{
		"good.yaml": {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\n" +
			"spec:\n  nodeName: node-1\n  containers: [{name: c, image: x, ports: [{name: http, containerPort: 8080}]}]\n" +
			"status:\n  phase: Running\n  podIP: 10.0.0.1\n  conditions: [{type: Ready, status: \"True\"}]\n")},
		"bad.yaml": {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: bad, namespace: shop}\nstatus: {podIP: not-an-ip}\n")},
	}
	s := NewFS(krt.NewGraph(), fsys)
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	p, ok := s.Inputs().Pods.Get("shop/web-1")
	if !ok || p.IP != "10.0.0.1" || p.Node != "node-1" || !p.Ready || p.NamedPorts["http"] != 8080 || p.ResourceVersion == "" {
		t.Errorf("pod shop/web-1 = %+v, %v; want its PodInfo, with the file's version", p, ok)
	}
	if _, ok := s.Inputs().Pods.Get("shop/bad"); ok {
		t.Error("a Pod with an invalid IP was stored")
	}
	if probs := s.Problems(); len(probs) != 1 || probs[0].Path != "bad.yaml" || !strings.Contains(probs[0].Message, "status.podIP") {
		t.Errorf("problems %+v, want the bad pod's IP", probs)
	}
}

func TestAddKind(t *testing.T) {
	fsys := fstest.MapFS{
		"w.yaml": {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\nspec: {size: 3}\n---\n" +
			"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: big, namespace: shop}\nspec: {size: 300}\n")},
	}
	s := NewFS(krt.NewGraph(), fsys)
	widgets := AddKind[*testcrd.Widget](s, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
		WithValidation(func(w *testcrd.Widget) error {
			if w.Spec.Size > 100 {
				return fmt.Errorf("spec.size %d: at most 100", w.Spec.Size)
			}
			return nil
		}))
	if err := s.Load(); err != nil {
		t.Fatal(err)
	}
	// The file fails as a whole: no previous objects, so none.
	if widgets.Len() != 0 || s.Unstructured().Len() != 0 {
		t.Fatalf("widgets %v unstructured %v", widgets.List(), s.Unstructured().List())
	}
	if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0].String(), "w.yaml:6: document 2: Widget shop/big: spec.size 300: at most 100") {
		t.Errorf("problems %v", p)
	}
}

// loadFSTree is the tree TestLoadFS loads: manifests of every kind the
// source reads, one of a kind it keeps unstructured, one broken, and
// files it must skip.
func loadFSTree() fstest.MapFS {
	return fstest.MapFS{
		"shop/web.yaml": {Data: []byte(serviceYAML("shop", "web", "web", 80) + "---\n" + podYAML("shop", "web-1", "web"))},
		"shop/db.yml":   {Data: []byte(podYAML("shop", "db-1", "db"))},
		"ns.json":       {Data: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`)},
		"routes.yaml": {Data: []byte("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: shop}\nspec:\n  rules: [{backendRefs: [{name: web, port: 80}]}]\n" +
			"---\napiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {name: g, namespace: shop}\n")},
		"README.md":          {Data: []byte("not a manifest")},
		".hidden/skip.yaml":  {Data: []byte(podYAML("shop", "hidden", "x"))},
		"other/widget.yaml":  {Data: []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: shop}\n")},
		"other/broken.yaml":  {Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n")},
		"other/configs.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mesh, namespace: meshd}\ndata: {mesh: 'trustDomain: x'}\n")},
	}
}

// checkSelectorIndex: Services select pods through the krt selector index.
func checkSelectorIndex(t *testing.T, g *krt.Graph, in sources.Inputs) {
	t.Helper()
	pod, _ := in.Pods.Get("shop/web-1")
	web := krt.NewCollection(g, in.Pods, func(ctx krt.HandlerContext, p *sources.PodInfo) *string {
		svcs := krt.Fetch(ctx, in.Services, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		if len(svcs) == 0 {
			return nil
		}
		s := p.Name + "->" + svcs[0].Name
		return &s
	}, krt.WithKey(func(s string) string { return s }))
	if got := keysOf(web, func(s string) string { return s }); got != pod.Name+"->web" {
		t.Errorf("selected %s", got)
	}
}
