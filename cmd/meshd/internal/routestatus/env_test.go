package routestatus

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/kube"
)

const controller = "meshd.io/mesh-controller"

var nsCounter atomic.Int64

// fixture is one test's namespace, clients, and a krt graph fed by a kube
// source over that namespace, with the mesh model built on it.
type fixture struct {
	t     testing.TB
	ns    string
	kube  kubernetes.Interface
	gw    gatewayclient.Interface
	model *collections.Model
	w     *Writer

	// puts counts the writer's status updates as the server saw them; a
	// test may set beforePut to act just before one reaches the server.
	puts      atomic.Int64
	beforePut atomic.Pointer[func(*http.Request)]
}

// newFixture starts the graph and the source for a new namespace and
// builds a writer over them (not running). It stops everything at the
// end of the test.
func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	env := needEnv(t)
	f := &fixture{t: t}
	clients, err := kube.ClientsForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f.kube, f.gw = clients.Kube, clients.Gateway
	f.ns = fmt.Sprintf("rs%d-%d", time.Now().UnixNano()%1_000_000, nsCounter.Add(1))
	if _, err := f.kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The writer's own client sees its requests on their way.
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/status") {
				f.puts.Add(1)
				if fn := f.beforePut.Load(); fn != nil {
					(*fn)(req)
				}
			}
			return rt.RoundTrip(req)
		})
	})
	writerClient, err := gatewayclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	g := krt.NewGraph()
	src := kube.New(g, clients, kube.WithDefaultWatch(kube.Watch{Namespace: f.ns}))
	in := src.Inputs()
	f.model = collections.Build(g, in)
	if opts.ControllerName == "" {
		opts.ControllerName = controller
	}
	f.w = New(writerClient, f.model.RouteStatus, Routes{HTTP: in.HTTPRoutes, GRPC: in.GRPCRoutes}, opts)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = g.Run(ctx) })
	wg.Go(func() { _ = src.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	sctx, scancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer scancel()
	if err := krt.WaitSynced(sctx, f.model.RouteStatus, in.HTTPRoutes, in.GRPCRoutes); err != nil {
		t.Fatalf("collections not synced: %v", err)
	}
	return f
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (fn roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return fn(r) }

// run starts the writer; the returned stop cancels it and fails the test
// unless Run returns within 10 s. stop is also called at the end of the
// test, and may be called more than once.
func (f *fixture) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				f.t.Errorf("Run did not return within 10s of its context ending")
				<-done
			}
		})
	}
	f.t.Cleanup(stop)
	return stop
}

var (
	groupCore   = gatewayv1.Group("")
	kindService = gatewayv1.Kind("Service")
)

// serviceParent is a parentRef to a Service of the route's namespace.
func serviceParent(name string, port int32) gatewayv1.ParentReference {
	ref := gatewayv1.ParentReference{Group: &groupCore, Kind: &kindService, Name: gatewayv1.ObjectName(name)}
	if port != 0 {
		ref.Port = &port
	}
	return ref
}

// backend is a backendRef to a Service.
func backend(name string, port int32) gatewayv1.BackendObjectReference {
	ref := gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name)}
	if port != 0 {
		ref.Port = &port
	}
	return ref
}

func (f *fixture) createService(name string, ports ...int32) {
	f.t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}}}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("http-%d", p), Port: p})
	}
	if _, err := f.kube.CoreV1().Services(f.ns).Create(f.t.Context(), svc, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// httpRoute is an HTTPRoute of the fixture's namespace with the given
// parents and one rule to the given backends.
func (f *fixture) httpRoute(name string, parents []gatewayv1.ParentReference, backends ...gatewayv1.BackendObjectReference) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	r.Spec.ParentRefs = parents
	rule := gatewayv1.HTTPRouteRule{}
	for _, b := range backends {
		rule.BackendRefs = append(rule.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: b}})
	}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{rule}
	return r
}

func (f *fixture) createHTTPRoute(r *gatewayv1.HTTPRoute) *gatewayv1.HTTPRoute {
	f.t.Helper()
	got, err := f.gw.GatewayV1().HTTPRoutes(f.ns).Create(f.t.Context(), r, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("creating HTTPRoute %s: %v", r.Name, err)
	}
	return got
}

func (f *fixture) getHTTPRoute(name string) *gatewayv1.HTTPRoute {
	f.t.Helper()
	r, err := f.gw.GatewayV1().HTTPRoutes(f.ns).Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// updateHTTPRoute applies change to the server's current copy.
func (f *fixture) updateHTTPRoute(name string, change func(*gatewayv1.HTTPRoute)) *gatewayv1.HTTPRoute {
	f.t.Helper()
	r := f.getHTTPRoute(name)
	change(r)
	got, err := f.gw.GatewayV1().HTTPRoutes(f.ns).Update(f.t.Context(), r, metav1.UpdateOptions{})
	if err != nil {
		f.t.Fatalf("updating HTTPRoute %s: %v", name, err)
	}
	return got
}

// eventually polls cond every 20 ms until it holds, failing the test with
// what() after 20 s.
func eventually(t testing.TB, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitHTTPStatus waits until the server's copy of the route satisfies ok,
// and returns it.
func (f *fixture) waitHTTPStatus(name string, ok func(*gatewayv1.HTTPRoute) bool) *gatewayv1.HTTPRoute {
	f.t.Helper()
	var last *gatewayv1.HTTPRoute
	eventually(f.t, func() string { return fmt.Sprintf("HTTPRoute %s status: %s", name, dump(last)) }, func() bool {
		last = f.getHTTPRoute(name)
		return ok(last)
	})
	return last
}

func dump(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// createWebRoute creates the Service web (port 80) and the HTTPRoute r,
// attached to it, sending to port 80 of the Service backendName.
func (f *fixture) createWebRoute(backendName string) {
	f.t.Helper()
	f.createService("web", 80)
	f.createHTTPRoute(f.httpRoute("r", []gatewayv1.ParentReference{serviceParent("web", 80)}, backend(backendName, 80)))
}

// wantNoErrors fails the test if the writer counted an error; why, if
// set, says why none is expected.
func (f *fixture) wantNoErrors(why string) {
	f.t.Helper()
	if s := f.w.Stats(); s.Errors != 0 {
		if why == "" {
			why = "want no errors"
		}
		f.t.Errorf("stats = %+v: %s", s, why)
	}
}
