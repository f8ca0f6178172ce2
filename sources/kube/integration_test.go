package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/sources/internal/testcrd"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

var nsCounter atomic.Int64

// newNamespace creates a namespace with a unique name: deleted namespaces
// never finish terminating without a controller-manager.
func newNamespace(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1_000_000, nsCounter.Add(1))
	if _, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func clients(t *testing.T) Clients {
	t.Helper()
	c, err := ClientsForConfig(needEnv(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRD installs a schemaless CRD and waits until discovery serves it.
func installCRD(t *testing.T, c Clients, gvr schema.GroupVersionResource, kind string) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group": gvr.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": gvr.Resource, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{
				"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if strings.HasSuffix(gvr.Group, ".k8s.io") {
		// Groups under k8s.io are reserved; the API server wants this
		// annotation before it serves one.
		crd.SetAnnotations(map[string]string{"api-approved.kubernetes.io": "unapproved, meshd test copy"})
	}
	if _, err := c.Dynamic.Resource(crdGVR).Create(t.Context(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, "CRD "+gvr.String()+" served", func() bool {
		list, err := c.Kube.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource })
	})
	// Discovery can lead the storage being ready: wait until a list works.
	eventually(t, "CRD "+gvr.String()+" listable", func() bool {
		_, err := c.Dynamic.Resource(gvr).List(t.Context(), metav1.ListOptions{Limit: 1})
		return err == nil
	})
}

func createObj(t *testing.T, c Clients, gvr schema.GroupVersionResource, ns string, obj map[string]any) {
	t.Helper()
	if _, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestKubeEachKind creates, updates and deletes one object of every kind
// on a real API server and checks each change reaches its collection.
func TestKubeEachKind(t *testing.T) {
	c := clients(t)
	installCRD(t, c, gatewayVersion.WithResource("httproutes"), "HTTPRoute")
	installCRD(t, c, gatewayVersion.WithResource("grpcroutes"), "GRPCRoute")
	ns := newNamespace(t, c.Kube)

	src := New(krt.NewGraph(), c, WithDefaultWatch(Watch{Namespace: ns}),
		WithWatch("configmaps", Watch{Namespace: ns, LabelSelector: "meshd-test=yes"}))
	run(t, src)
	in := src.Inputs()
	if in.Pods.Len() != 0 || in.Services.Len() != 0 {
		t.Fatalf("fresh namespace not empty: %s %s", keys(in.Pods), keys(in.Services))
	}
	if _, ok := in.Namespaces.Get(ns); !ok {
		t.Errorf("namespace %s missing from %s", ns, keys(in.Namespaces))
	}
	runSteps(t, serviceAndPodSteps(t.Context(), c, ns, in))
	runSteps(t, kubeOtherKindSteps(t, c, ns, in))
	if p, ok := in.Namespaces.Get(ns); !ok || p.ManagedFields != nil {
		t.Errorf("managed fields not stripped: %v", p.ManagedFields)
	}
}

// serviceAndPodSteps creates and updates a service and a pod in ns, read
// through in. kubeOtherKindSteps deletes them.
func serviceAndPodSteps(ctx context.Context, c Clients, ns string, in sources.Inputs) []step {
	core := c.Kube.CoreV1()
	return []step{
		{"create service", func() error {
			_, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta(ns, "web", nil),
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}, func() bool { s, ok := in.Services.Get(ns + "/web"); return ok && s.Spec.ClusterIP != "" }},
		{"update service", func() error {
			s, err := core.Services(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Ports[0].Port = 81
			_, err = core.Services(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}, func() bool { s, ok := in.Services.Get(ns + "/web"); return ok && s.Spec.Ports[0].Port == 81 }},
		{"create pod", func() error {
			_, err := core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta(ns, "web-1", map[string]string{"app": "web"}),
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}, metav1.CreateOptions{})
			return err
		}, func() bool { _, ok := in.Pods.Get(ns + "/web-1"); return ok }},
		{"update pod status", func() error {
			p, err := core.Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			p.Status.PodIP = "10.1.2.3"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.1.2.3"}}
			_, err = core.Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}, func() bool { p, ok := in.Pods.Get(ns + "/web-1"); return ok && p.IP == "10.1.2.3" }},
	}
}

// kubeOtherKindSteps writes EndpointSlices, ConfigMaps, nodes and routes
// in ns, read through in, then deletes what serviceAndPodSteps made.
func kubeOtherKindSteps(t *testing.T, c Clients, ns string, in sources.Inputs) []step {
	ctx := t.Context()
	core := c.Kube.CoreV1()
	route := func(kind, name string, port int64) map[string]any {
		return map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "web", "port": port}}}}},
		}
	}
	httpRoutes := c.Dynamic.Resource(gatewayVersion.WithResource("httproutes")).Namespace(ns)
	return []step{
		{"create endpointslice", func() error {
			_, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: meta(ns, "web-x", nil),
				AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}}}}, metav1.CreateOptions{})
			return err
		}, func() bool { _, ok := in.EndpointSlices.Get(ns + "/web-x"); return ok }},
		{"delete endpointslice", func() error {
			return c.Kube.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "web-x", metav1.DeleteOptions{})
		},
			func() bool { return in.EndpointSlices.Len() == 0 }},
		{"create configmaps, one unselected", func() error {
			if _, err := core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(ns, "other", nil)}, metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err := core.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(ns, "mesh", map[string]string{"meshd-test": "yes"}),
				Data: map[string]string{"mesh": "{}"}}, metav1.CreateOptions{})
			return err
		}, func() bool { return keys(in.ConfigMaps) == ns+"/mesh" }},
		{"create node", func() error {
			_, err := core.Nodes().Create(ctx, &corev1.Node{ObjectMeta: meta("", ns+"-node", map[string]string{corev1.LabelTopologyZone: "z1"})}, metav1.CreateOptions{})
			return err
		}, func() bool { _, ok := in.Nodes.Get(ns + "-node"); return ok }},
		{"delete node", func() error { return core.Nodes().Delete(ctx, ns+"-node", metav1.DeleteOptions{}) },
			func() bool { _, ok := in.Nodes.Get(ns + "-node"); return !ok }},
		{"create httproute", func() error {
			_, err := httpRoutes.Create(ctx, &unstructured.Unstructured{Object: route("HTTPRoute", "r1", 80)}, metav1.CreateOptions{})
			return err
		}, func() bool {
			r, ok := in.HTTPRoutes.Get(ns + "/r1")
			return ok && len(r.Spec.Rules) == 1 && *r.Spec.Rules[0].BackendRefs[0].Port == 80
		}},
		{"create grpcroute", func() error {
			createObj(t, c, gatewayVersion.WithResource("grpcroutes"), ns, route("GRPCRoute", "g1", 90))
			return nil
		}, func() bool { _, ok := in.GRPCRoutes.Get(ns + "/g1"); return ok }},
		{"delete httproute", func() error { return httpRoutes.Delete(ctx, "r1", metav1.DeleteOptions{}) },
			func() bool { return in.HTTPRoutes.Len() == 0 }},
		{"delete pod", func() error {
			return core.Pods(ns).Delete(ctx, "web-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		},
			func() bool { return in.Pods.Len() == 0 }},
		{"delete service", func() error { return core.Services(ns).Delete(ctx, "web", metav1.DeleteOptions{}) },
			func() bool { return in.Services.Len() == 0 }},
	}
}

// TestKubeDerivedThroughChurn keeps a collection derived from two informer
// collections (the pods each service selects) while pods and services churn,
// and checks it against what the API server holds.
func TestKubeDerivedThroughChurn(t *testing.T) {
	c := clients(t)
	ns := newNamespace(t, c.Kube)
	g := krt.NewGraph()
	src := New(g, c, WithDefaultWatch(Watch{Namespace: ns}))
	derived := selectedPods(g, src.Inputs())
	run(t, src)
	churn(t, c.Kube.CoreV1(), ns)
	want := apiSelection(t, c.Kube.CoreV1(), ns)
	got := func() map[string]string {
		m := map[string]string{}
		for _, s := range derived.List() {
			m[s.service] = s.pods
		}
		return m
	}
	eventually(t, "derived collection to match the API server", func() bool { return fmt.Sprint(got()) == fmt.Sprint(want) })
}

// selected is a service and the pods it selects, comma-separated.
type selected struct{ service, pods string }

// selectedPods derives from in the pods each service selects.
func selectedPods(g *krt.Graph, in sources.Inputs) krt.Collection[selected] {
	return krt.NewCollection(g, in.Services, func(hc krt.HandlerContext, s *corev1.Service) *selected {
		pods := krt.Fetch(hc, in.Pods, krt.FilterNamespace(s.Namespace), krt.FilterLabels(s.Spec.Selector))
		names := make([]string, len(pods))
		for i, p := range pods {
			names[i] = p.Name
		}
		return &selected{service: s.Name, pods: strings.Join(names, ",")}
	}, krt.WithKey(func(s selected) string { return s.service }))
}

// churn creates three services in ns, then makes 60 random changes to
// pods (create, delete, relabel) and service selectors, seeded.
func churn(t *testing.T, core corev1client.CoreV1Interface, ns string) {
	t.Helper()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	apps := []string{"a", "b", "c"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}
	for i := range 3 {
		_, err := core.Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta(ns, fmt.Sprintf("s%d", i), nil),
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": apps[i]}, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	live := map[string]bool{}
	for op := range 60 {
		name := fmt.Sprintf("p%d", rng.IntN(15))
		app := apps[rng.IntN(len(apps))]
		var err error
		switch {
		case op%20 == 19:
			// Point a service at another app.
			s, gerr := core.Services(ns).Get(ctx, fmt.Sprintf("s%d", rng.IntN(3)), metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			s.Spec.Selector = map[string]string{"app": app}
			_, err = core.Services(ns).Update(ctx, s, metav1.UpdateOptions{})
		case !live[name]:
			_, err = core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta(ns, name, map[string]string{"app": app}), Spec: podSpec}, metav1.CreateOptions{})
			live[name] = true
		case rng.IntN(2) == 0:
			err = core.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			delete(live, name)
		default:
			p, gerr := core.Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			p.Labels = map[string]string{"app": app}
			_, err = core.Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
	}
}

// apiSelection is the truth, straight from the API server: by service in
// ns, the sorted names of the pods it selects, comma-separated.
func apiSelection(t *testing.T, core corev1client.CoreV1Interface, ns string) map[string]string {
	t.Helper()
	want := map[string]string{}
	pods, err := core.Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := core.Services(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		var names []string
		for _, p := range pods.Items {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(p.Labels)) {
				names = append(names, p.Name)
			}
		}
		slices.Sort(names)
		want[s.Name] = strings.Join(names, ",")
	}
	return want
}

func TestKubeDynamicCRD(t *testing.T) {
	c := clients(t)
	gvr := schema.GroupVersionResource{Group: "test.meshd.io", Version: "v1", Resource: "widgets"}
	installCRD(t, c, gvr, "Widget")
	ns := newNamespace(t, c.Kube)
	src := New(krt.NewGraph(), c, WithDefaultWatch(Watch{Namespace: ns}))
	widgets := AddDynamic[*testcrd.Widget](src, gvr, Watch{Namespace: ns})
	run(t, src, widgets)
	res := c.Dynamic.Resource(gvr).Namespace(ns)
	obj := func(name string, size int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "test.meshd.io/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"size": size},
		}}
	}
	if _, err := res.Create(t.Context(), obj("w1", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "widget created", func() bool { w, ok := widgets.Get(ns + "/w1"); return ok && w.Spec.Size == 1 })
	cur, err := res.Get(t.Context(), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(cur.Object, int64(2), "spec", "size"); err != nil {
		t.Fatal(err)
	}
	if _, err := res.Update(t.Context(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "widget updated", func() bool { w, ok := widgets.Get(ns + "/w1"); return ok && w.Spec.Size == 2 })
	if err := res.Delete(t.Context(), "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "widget deleted", func() bool { return widgets.Len() == 0 })
}

// TestKubeStopLeavesNoGoroutines runs a source to sync and stops it: every
// informer goroutine must be gone once Run returns.
func TestKubeStopLeavesNoGoroutines(t *testing.T) {
	c := clients(t)
	before := goleak.IgnoreCurrent()
	src := New(krt.NewGraph(), c)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	in := src.Inputs()
	if err := in.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	leakcheck.VerifyNone(t, append(leakOptions, before)...)
}
