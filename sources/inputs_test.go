package sources_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/meshconfig"
)

// anyCollection is what every field of Inputs offers, whatever its type.
type anyCollection interface {
	Name() string
	HasSynced() bool
	Len() int
}

// fields returns the collections of in by field name, through reflection,
// so a field added to Inputs is checked without a line here.
func fields(in sources.Inputs) map[string]anyCollection {
	out := map[string]anyCollection{}
	v := reflect.ValueOf(in)
	for i := range v.NumField() {
		var c anyCollection
		if f := v.Field(i); !f.IsNil() {
			c = f.Interface().(anyCollection)
		}
		out[v.Type().Field(i).Name] = c
	}
	return out
}

// TestEveryFieldIsAKind checks that each operation over Inputs covers
// every field: one missing from the package's table of kinds would stay
// nil here.
func TestEveryFieldIsAKind(t *testing.T) {
	g := krt.NewGraph()
	static := sources.NewStaticInputs(g, "static", krt.WithUnsynced())
	completed := sources.Inputs{}.Complete(g, "empty")
	joined := sources.JoinInputs(g, static.Inputs(), completed)
	for what, in := range map[string]sources.Inputs{"NewStaticInputs": static.Inputs(), "Complete": completed, "JoinInputs": joined} {
		for name, c := range fields(in) {
			if c == nil {
				t.Errorf("%s: %s is nil", what, name)
			}
		}
		if got, want := len(in.Synced()), reflect.TypeFor[sources.Inputs]().NumField(); got != want {
			t.Errorf("%s: %d synced channels, want one per field (%d)", what, got, want)
		}
	}
	for name, c := range fields(completed) {
		if !c.HasSynced() || c.Len() != 0 || !strings.HasPrefix(c.Name(), "empty/") {
			t.Errorf("Complete: %s is %q, synced %v, %d items; want empty/..., synced, empty", name, c.Name(), c.HasSynced(), c.Len())
		}
	}
	for name, c := range fields(static.Inputs()) {
		if c.HasSynced() || !strings.HasPrefix(c.Name(), "static/") {
			t.Errorf("NewStaticInputs(WithUnsynced): %s is %q, synced %v", name, c.Name(), c.HasSynced())
		}
	}
}

func TestCompleteKeepsSetFields(t *testing.T) {
	g := krt.NewGraph()
	pods := krt.NewStatic[*sources.PodInfo](g, sources.CollectionOptions[*sources.PodInfo]("mine", krt.WithUnsynced())...)
	in := sources.Inputs{Pods: pods}.Complete(g, "empty")
	if in.Pods.Name() != "mine" {
		t.Errorf("Pods replaced by %s", in.Pods.Name())
	}
	if in.HasSynced() {
		t.Error("synced although Pods is not")
	}
	pods.MarkSynced()
	if !in.HasSynced() {
		t.Error("not synced once Pods is")
	}
}

func TestStaticInputsWrites(t *testing.T) {
	g := krt.NewGraph()
	s := sources.NewStaticInputs(g, "static")
	in := s.Inputs()
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "x"}
	mc := meshconfig.Default()
	mc.TrustDomain = "example.org"
	items := []any{
		&corev1.Service{ObjectMeta: meta}, &corev1.Pod{ObjectMeta: meta}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		&discoveryv1.EndpointSlice{ObjectMeta: meta}, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&corev1.ConfigMap{ObjectMeta: meta}, &gatewayv1.HTTPRoute{ObjectMeta: meta}, &gatewayv1.GRPCRoute{ObjectMeta: meta},
		&securityv1.PeerAuthentication{ObjectMeta: meta}, &securityv1.AuthorizationPolicy{ObjectMeta: meta}, mc,
		sources.StaleCluster{Name: "west", Since: time.Unix(100, 0)},
	}
	v1 := s.Set(items...)
	for name, c := range fields(in) {
		if c.Len() != 1 {
			t.Errorf("after Set, %s holds %d items, want 1", name, c.Len())
		}
	}
	if got, ok := in.MeshConfig.Get(krt.SingletonKey); !ok || got.TrustDomain != "example.org" {
		t.Errorf("mesh config %+v, %v; want the one set, under the singleton key", got, ok)
	}
	if v2 := s.Delete(items...); v2 <= v1 {
		t.Errorf("Delete committed version %d, not after Set's %d", v2, v1)
	}
	for name, c := range fields(in) {
		if c.Len() != 0 {
			t.Errorf("after Delete, %s holds %d items", name, c.Len())
		}
	}
	if st := sources.StaticOf[*sources.PodInfo](s); st.Name() != in.Pods.Name() {
		t.Errorf("StaticOf[*sources.PodInfo] is %s, want %s", st.Name(), in.Pods.Name())
	}
}

// A full Pod given to Set or Delete is stored, and deleted, as its
// PodInfo; a PodInfo is stored as it is.
func TestStaticInputsConvertPods(t *testing.T) {
	s := sources.NewStaticInputs(krt.NewGraph(), "static")
	pods := s.Inputs().Pods
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-1"}, Status: corev1.PodStatus{PodIP: "10.0.0.1"}}
	s.Set(pod)
	if p, ok := pods.Get("ns/a"); !ok || p.IP != "10.0.0.1" || p.Node != "node-1" || p.Labels["app"] != "web" {
		t.Errorf("pod ns/a = %+v, %v; want the PodInfo of the pod set", p, ok)
	}
	info := sources.NewPodInfo(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
	s.Set(info)
	if p, ok := pods.Get("ns/b"); !ok || p != info {
		t.Errorf("pod ns/b = %v, %v; want the PodInfo set", p, ok)
	}
	s.Delete(pod)
	if _, ok := pods.Get("ns/a"); ok || pods.Len() != 1 {
		t.Errorf("Delete of a Pod left %d pods, ns/a among them: %v", pods.Len(), ok)
	}
}

func TestStaticInputsRejectsOtherTypes(t *testing.T) {
	s := sources.NewStaticInputs(krt.NewGraph(), "static")
	for name, f := range map[string]func(){
		"Set":      func() { s.Set(&corev1.Secret{}) },
		"Delete":   func() { s.Delete("ns/x") },
		"StaticOf": func() { sources.StaticOf[*corev1.Secret](s) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "no input collection holds") {
					t.Errorf("%s: recovered %v, want a panic naming the type", name, r)
				}
			}()
			f()
		}()
	}
}

func TestWaitSynced(t *testing.T) {
	s := sources.NewStaticInputs(krt.NewGraph(), "static", krt.WithUnsynced())
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := s.Inputs().WaitSynced(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitSynced before MarkSynced = %v, want the deadline", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Inputs().WaitSynced(t.Context()) }()
	s.MarkSynced()
	if err := <-done; err != nil {
		t.Errorf("WaitSynced after MarkSynced = %v", err)
	}
}
