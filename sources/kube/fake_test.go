package kube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
	"github.com/meshd/meshd/krt/krttest"

	"github.com/meshd/meshd/sources/internal/testcrd"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

func meta(ns, name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}
}

func pod(ns, name, app string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: meta(ns, name, map[string]string{"app": app})}
}

func service(ns, name, app string) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta(ns, name, nil), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app}}}
}

// run runs src until the test ends and waits for every collection to sync.
func run(t *testing.T, src *Source, cols ...interface{ Synced() <-chan struct{} }) {
	t.Helper()
	ctx := testrun.Go(t, src.Run)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	err := src.Inputs().WaitSynced(wctx)
	if err == nil {
		err = krt.WaitSynced(wctx, cols...)
	}
	if err != nil {
		t.Fatalf("collections did not sync: %v", err)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testrun.Poll(20*time.Second, 5*time.Millisecond, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func keys[T sources.Object](c krt.Collection[T]) string {
	var ks []string
	for _, it := range c.List() {
		ks = append(ks, sources.Key(it))
	}
	return strings.Join(ks, ",")
}

// gatewayResources makes fake discovery serve the Gateway API routes.
func gatewayResources() *metav1.APIResourceList {
	return &metav1.APIResourceList{
		GroupVersion: gatewayv1.GroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "httproutes", Namespaced: true, Kind: "HTTPRoute"}, {Name: "grpcroutes", Namespaced: true, Kind: "GRPCRoute"}},
	}
}

func TestFakeInitialListAndEvents(t *testing.T) {
	kube, gw := fakeCluster()
	g := krt.NewGraph()
	src := New(g, Clients{Kube: kube, Gateway: gw})
	in := src.Inputs()
	if in.Pods.HasSynced() {
		t.Fatal("synced before Run")
	}
	versionBefore := g.Version()
	run(t, src)
	// Eight informers, each listing in one transaction.
	if v := g.Version() - versionBefore; v > 8 {
		t.Errorf("initial listing took %d transactions, want at most 8", v)
	}
	want := map[string]string{
		"services": keys(in.Services), "pods": keys(in.Pods), "namespaces": keys(in.Namespaces), "nodes": keys(in.Nodes),
		"configmaps": keys(in.ConfigMaps), "endpointslices": keys(in.EndpointSlices), "httproutes": keys(in.HTTPRoutes), "grpcroutes": keys(in.GRPCRoutes),
	}
	for kind, got := range map[string]string{
		"services": "shop/web", "pods": "shop/db-1,shop/web-1", "namespaces": "shop", "nodes": "node-1",
		"configmaps": "meshd/mesh", "endpointslices": "shop/web-abc", "httproutes": "shop/r1", "grpcroutes": "shop/g1",
	} {
		if want[kind] != got {
			t.Errorf("%s: %q, want %q", kind, want[kind], got)
		}
	}

	// Create, update and delete of each kind arrive.
	runSteps(t, podAndServiceSteps(t.Context(), kube, in))
	runSteps(t, otherKindSteps(t.Context(), kube, gw, in))
	stats := src.Stats()
	i := slices.IndexFunc(stats, func(s CollectionStats) bool { return s.Name == "kube/pods" })
	if st := stats[i]; st.Adds != 3 || st.Updates != 1 || st.Deletes != 1 || !st.Synced || st.Items != 2 {
		t.Errorf("pod stats %+v", st)
	}
}

// fakeCluster returns fake clients holding one object of each built-in
// kind (two pods) and one of each route.
func fakeCluster() (*fake.Clientset, *gatewayfake.Clientset) {
	kube := fake.NewClientset(
		service("shop", "web", "web"), pod("shop", "web-1", "web"), pod("shop", "db-1", "db"),
		&corev1.Namespace{ObjectMeta: meta("", "shop", nil)},
		&corev1.Node{ObjectMeta: meta("", "node-1", map[string]string{corev1.LabelTopologyZone: "z1"})},
		&corev1.ConfigMap{ObjectMeta: meta("meshd", "mesh", nil), Data: map[string]string{"mesh": "{}"}},
		&discoveryv1.EndpointSlice{ObjectMeta: meta("shop", "web-abc", nil), AddressType: discoveryv1.AddressTypeIPv4},
	)
	kube.Resources = []*metav1.APIResourceList{gatewayResources()}
	gw := gatewayfake.NewClientset(
		&gatewayv1.HTTPRoute{ObjectMeta: meta("shop", "r1", nil)},
		&gatewayv1.GRPCRoute{ObjectMeta: meta("shop", "g1", nil)},
	)
	return kube, gw
}

// step is one write to a cluster and the state of the inputs it leads
// to.
type step struct {
	name string
	do   func() error
	done func() bool
}

// runSteps makes each step's write and waits for the state it leads to.
func runSteps(t *testing.T, steps []step) {
	t.Helper()
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		eventually(t, s.name, s.done)
	}
}

// errOf returns the error of a client call, dropping the object it
// returned.
func errOf[T any](_ T, err error) error { return err }

// podAndServiceSteps creates, updates and deletes pods and services of
// the fakeCluster, read through in.
func podAndServiceSteps(ctx context.Context, kube *fake.Clientset, in sources.Inputs) []step {
	core := kube.CoreV1()
	return []step{
		{"create pod", func() error {
			return errOf(core.Pods("shop").Create(ctx, pod("shop", "web-2", "web"), metav1.CreateOptions{}))
		},
			func() bool { return keys(in.Pods) == "shop/db-1,shop/web-1,shop/web-2" }},
		{"update pod", func() error {
			return errOf(core.Pods("shop").Update(ctx, pod("shop", "web-2", "web2"), metav1.UpdateOptions{}))
		},
			func() bool { p, ok := in.Pods.Get("shop/web-2"); return ok && p.Labels["app"] == "web2" }},
		{"delete pod", func() error { return core.Pods("shop").Delete(ctx, "db-1", metav1.DeleteOptions{}) },
			func() bool { return keys(in.Pods) == "shop/web-1,shop/web-2" }},
		{"create service", func() error {
			return errOf(core.Services("shop").Create(ctx, service("shop", "api", "api"), metav1.CreateOptions{}))
		},
			func() bool { return keys(in.Services) == "shop/api,shop/web" }},
		{"update service", func() error {
			return errOf(core.Services("shop").Update(ctx, service("shop", "api", "api2"), metav1.UpdateOptions{}))
		},
			func() bool { s, _ := in.Services.Get("shop/api"); return s != nil && s.Spec.Selector["app"] == "api2" }},
		{"delete service", func() error { return core.Services("shop").Delete(ctx, "web", metav1.DeleteOptions{}) },
			func() bool { return keys(in.Services) == "shop/api" }},
	}
}

// otherKindSteps writes namespaces, nodes, ConfigMaps, EndpointSlices and
// routes of the fakeCluster, read through in.
func otherKindSteps(ctx context.Context, kube *fake.Clientset, gw *gatewayfake.Clientset, in sources.Inputs) []step {
	core := kube.CoreV1()
	return []step{
		{"create namespace", func() error {
			return errOf(core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta("", "other", nil)}, metav1.CreateOptions{}))
		},
			func() bool { return keys(in.Namespaces) == "other,shop" }},
		{"delete namespace", func() error { return core.Namespaces().Delete(ctx, "other", metav1.DeleteOptions{}) },
			func() bool { return keys(in.Namespaces) == "shop" }},
		{"update node", func() error {
			return errOf(core.Nodes().Update(ctx, &corev1.Node{ObjectMeta: meta("", "node-1", map[string]string{corev1.LabelTopologyZone: "z2"})}, metav1.UpdateOptions{}))
		}, func() bool {
			n, _ := in.Nodes.Get("node-1")
			return n != nil && n.Labels[corev1.LabelTopologyZone] == "z2"
		}},
		{"update configmap", func() error {
			return errOf(core.ConfigMaps("meshd").Update(ctx, &corev1.ConfigMap{ObjectMeta: meta("meshd", "mesh", nil), Data: map[string]string{"mesh": "trustDomain: x"}}, metav1.UpdateOptions{}))
		}, func() bool {
			c, _ := in.ConfigMaps.Get("meshd/mesh")
			return c != nil && c.Data["mesh"] == "trustDomain: x"
		}},
		{"create endpointslice", func() error {
			return errOf(kube.DiscoveryV1().EndpointSlices("shop").Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: meta("shop", "api-x", nil), AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{}))
		}, func() bool { return keys(in.EndpointSlices) == "shop/api-x,shop/web-abc" }},
		{"delete endpointslice", func() error {
			return kube.DiscoveryV1().EndpointSlices("shop").Delete(ctx, "web-abc", metav1.DeleteOptions{})
		},
			func() bool { return keys(in.EndpointSlices) == "shop/api-x" }},
		{"create httproute", func() error {
			return errOf(gw.GatewayV1().HTTPRoutes("shop").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: meta("shop", "r2", nil)}, metav1.CreateOptions{}))
		}, func() bool { return keys(in.HTTPRoutes) == "shop/r1,shop/r2" }},
		{"delete grpcroute", func() error { return gw.GatewayV1().GRPCRoutes("shop").Delete(ctx, "g1", metav1.DeleteOptions{}) },
			func() bool { return keys(in.GRPCRoutes) == "" }},
	}
}

func TestFakeTombstone(t *testing.T) {
	kube := fake.NewClientset(pod("shop", "a", "x"), pod("shop", "b", "x"))
	g := krt.NewGraph()
	src := New(g, Clients{Kube: kube})
	run(t, src)
	pods := src.Inputs().Pods
	f := podFeed(t, src)
	// A delete the watch missed reaches the handler as a tombstone; with
	// or without the final object, the key is what counts.
	f.delete(cache.DeletedFinalStateUnknown{Key: "shop/a", Obj: sources.NewPodInfo(pod("shop", "a", "x"))})
	f.delete(cache.DeletedFinalStateUnknown{Key: "shop/b"})
	// A second delivery (a relist racing a watch) is harmless.
	f.delete(cache.DeletedFinalStateUnknown{Key: "shop/b"})
	krttest.Flush(t, g) // the feed queues its writes
	if got := keys(pods); got != "" {
		t.Errorf("pods after tombstones: %q", got)
	}
	f.upsert(sources.NewPodInfo(pod("shop", "c", "x")), &f.adds)
	f.upsert(sources.NewPodInfo(pod("shop", "c", "x")), &f.adds)
	krttest.Flush(t, g)
	if got := keys(pods); got != "shop/c" {
		t.Errorf("pods after a repeated add: %q", got)
	}
	f.upsert("not a pod", &f.adds)
	if st := f.stats(); st.BadObjects != 1 {
		t.Errorf("stats %+v", st)
	}
}

// podFeed returns the feed of src's pods.
func podFeed(t *testing.T, src *Source) *feed[*sources.PodInfo] {
	t.Helper()
	for _, r := range src.feeds {
		if f, ok := r.(*feed[*sources.PodInfo]); ok {
			return f
		}
	}
	t.Fatal("no pod feed")
	return nil
}

// The pod informer caches each Pod's PodInfo, made after the Watch's own
// transform and the cluster annotation have seen the full Pod.
func TestFakePodsCachedAsPodInfo(t *testing.T) {
	full := pod("shop", "a", "x")
	full.Spec.NodeName = "node-1"
	full.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	var sawFull bool
	own := func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName == "node-1" {
			sawFull = true
		}
		return obj, nil
	}
	src := New(krt.NewGraph(), Clients{Kube: fake.NewClientset(full)}, WithCluster("west"),
		WithWatch("pods", Watch{Transform: own}))
	run(t, src)
	p, ok := src.Inputs().Pods.Get("west/shop/a")
	if !ok || p.IP != "10.0.0.1" || p.Node != "node-1" || !p.Ready || sources.ClusterOf(p) != "west" {
		t.Fatalf("pod west/shop/a = %+v, %v; want its PodInfo, annotated with the cluster", p, ok)
	}
	if !sawFull {
		t.Error("the Watch's transform did not see the full Pod")
	}
	for _, obj := range podFeed(t, src).informer.GetStore().List() {
		if _, ok := obj.(*sources.PodInfo); !ok {
			t.Errorf("informer caches a %T, want *sources.PodInfo", obj)
		}
	}
}

func TestFakeWatchOptionsAndMissingCRDs(t *testing.T) {
	kube := fake.NewClientset(pod("a", "p1", "x"), pod("b", "p2", "x"), service("a", "s1", "x"), service("b", "s2", "x"))
	// Discovery serves no Gateway API: the routes are skipped.
	gw := gatewayfake.NewClientset(&gatewayv1.HTTPRoute{ObjectMeta: meta("a", "r", nil)})
	src := New(krt.NewGraph(), Clients{Kube: kube, Gateway: gw},
		WithDefaultWatch(Watch{Namespace: "a"}),
		WithWatch("services", Watch{Namespace: "b"}),
	)
	run(t, src)
	in := src.Inputs()
	if got := keys(in.Pods); got != "a/p1" {
		t.Errorf("pods %q, want only namespace a", got)
	}
	if got := keys(in.Services); got != "b/s2" {
		t.Errorf("services %q, want only namespace b", got)
	}
	if in.HTTPRoutes.Len() != 0 || !in.HTTPRoutes.HasSynced() {
		t.Errorf("routes %v", in.HTTPRoutes.List())
	}
	for _, st := range src.Stats() {
		if skipped := strings.HasSuffix(st.Name, "routes"); st.Skipped != skipped {
			t.Errorf("%s: skipped %v", st.Name, st.Skipped)
		}
	}
	// Without a Gateway client, the routes are empty and synced too.
	src2 := New(krt.NewGraph(), Clients{Kube: fake.NewClientset()})
	run(t, src2)
	if !src2.Inputs().GRPCRoutes.HasSynced() {
		t.Error("routes without a client not synced")
	}
}

// TestFakeWithoutWatch turns two built-in watches off: their collections
// are empty and synced, with no informer, while the others still list.
func TestFakeWithoutWatch(t *testing.T) {
	kube := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: meta("meshd", "mesh", nil)},
		pod("shop", "web-1", "web"),
	)
	kube.Resources = []*metav1.APIResourceList{gatewayResources()}
	gw := gatewayfake.NewClientset(&gatewayv1.HTTPRoute{ObjectMeta: meta("shop", "r1", nil)})
	src := New(krt.NewGraph(), Clients{Kube: kube, Gateway: gw}, WithoutWatch("configmaps"), WithoutWatch("httproutes"))
	run(t, src)
	in := src.Inputs()
	if in.ConfigMaps.Len() != 0 || in.HTTPRoutes.Len() != 0 || !in.ConfigMaps.HasSynced() || !in.HTTPRoutes.HasSynced() {
		t.Errorf("unwatched: configmaps %v, httproutes %v; want both empty and synced", in.ConfigMaps.List(), in.HTTPRoutes.List())
	}
	if got := keys(in.Pods); got != "shop/web-1" {
		t.Errorf("pods %q, want the one listed", got)
	}
	var resources []string
	for _, st := range src.Stats() {
		resources = append(resources, st.Resource)
	}
	if len(resources) != 6 || slices.ContainsFunc(resources, func(r string) bool {
		return strings.HasSuffix(r, "configmaps") || strings.HasSuffix(r, "httproutes")
	}) {
		t.Errorf("informers for %v, want 6, none for the unwatched", resources)
	}
}

var widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

func widget(ns, name string, size any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": name, "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":     map[string]any{"size": size},
	}}
}

func TestFakeDynamic(t *testing.T) {
	kube := fake.NewClientset()
	kube.Resources = []*metav1.APIResourceList{{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets", Namespaced: true, Kind: "Widget"}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgetGVR: "WidgetList", {Group: "example.com", Version: "v1", Resource: "gadgets"}: "GadgetList"},
		widget("shop", "w1", int64(3)), widget("shop", "bad", "three"))
	src := New(krt.NewGraph(), Clients{Kube: kube, Dynamic: dyn})
	typed := AddDynamic[*testcrd.Widget](src, widgetGVR, Watch{})
	raw := AddDynamic[*unstructured.Unstructured](src, widgetGVR, Watch{}, krt.WithName("raw-widgets"))
	// Not served by discovery: skipped.
	gadgets := AddDynamic[*unstructured.Unstructured](src, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, Watch{})
	run(t, src, typed, raw, gadgets)

	w, ok := typed.Get("shop/w1")
	if !ok || w.Spec.Size != 3 || w.ManagedFields != nil {
		t.Fatalf("typed widget %+v", w)
	}
	if got := keys(raw); got != "shop/bad,shop/w1" {
		t.Errorf("unstructured widgets %q", got)
	}
	if got := keys(typed); got != "shop/w1" {
		t.Errorf("typed widgets %q, want the unconvertible one left out", got)
	}
	if _, err := dyn.Resource(widgetGVR).Namespace("shop").Create(t.Context(), widget("shop", "w2", int64(5)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "new widget", func() bool { w, ok := typed.Get("shop/w2"); return ok && w.Spec.Size == 5 })
	if err := dyn.Resource(widgetGVR).Namespace("shop").Delete(t.Context(), "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted widget", func() bool { return keys(typed) == "shop/w2" && keys(raw) == "shop/bad,shop/w2" })
	var typedStats CollectionStats
	for _, st := range src.Stats() {
		if st.Name == "kube/widgets.example.com" && !st.Skipped && st.Resource == widgetGVR.String() && typedStats.Name == "" {
			typedStats = st
		}
		if strings.Contains(st.Name, "gadgets") && !st.Skipped {
			t.Errorf("gadgets not skipped: %+v", st)
		}
	}
	if typedStats.BadObjects == 0 {
		t.Errorf("unconvertible widget not counted: %+v", src.Stats())
	}
	if gadgets.Len() != 0 {
		t.Errorf("gadgets %v", gadgets.List())
	}
}
