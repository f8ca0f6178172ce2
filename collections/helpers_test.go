package collections

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

func metaKey(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// newTestInputs returns static inputs made with the options the sources
// use, written by type: in.Set(pod, svc) puts each item in the collection
// of its kind.
func newTestInputs(g *krt.Graph) sources.StaticInputs { return sources.NewStaticInputs(g, "test") }

// set sets items, in one transaction, in the collection of in holding T;
// Pods as their PodInfos, as the sources store them.
func set[T any](in sources.StaticInputs, items ...T) {
	if pods, ok := podInfos(items); ok {
		sources.StaticOf[*sources.PodInfo](in).Set(pods...)
		return
	}
	sources.StaticOf[T](in).Set(items...)
}

// del deletes the items of type T at keys (for Pods, their PodInfos).
func del[T any](in sources.StaticInputs, keys ...string) {
	if isPod[T]() {
		sources.StaticOf[*sources.PodInfo](in).Delete(keys...)
		return
	}
	sources.StaticOf[T](in).Delete(keys...)
}

// isPod reports whether T is *corev1.Pod, which the inputs hold as
// *sources.PodInfo.
func isPod[T any]() bool {
	var zero T
	_, ok := any(zero).(*corev1.Pod)
	return ok
}

// podInfos returns the PodInfos of items when T is *corev1.Pod.
func podInfos[T any](items []T) ([]*sources.PodInfo, bool) {
	if !isPod[T]() {
		return nil, false
	}
	out := make([]*sources.PodInfo, len(items))
	for i, it := range items {
		out[i] = sources.NewPodInfo(any(it).(*corev1.Pod))
	}
	return out, true
}

// newTestModel builds a model over fresh static inputs.
func newTestModel(opts ...Option) (*krt.Graph, sources.StaticInputs, *Model) {
	g := krt.NewGraph()
	ti := newTestInputs(g)
	return g, ti, Build(g, ti.Inputs(), opts...)
}

// svcPort builds a service port; target is an int or a string.
func svcPort(name string, port int32, target any) corev1.ServicePort {
	p := corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
	switch t := target.(type) {
	case int:
		p.TargetPort = intstr.FromInt32(int32(t))
	case string:
		p.TargetPort = intstr.FromString(t)
	}
	return p
}

func service(ns, name string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Selector: selector, Ports: ports, ClusterIP: "10.96.0.1"},
	}
}

func pod(ns, name, ip string, labels map[string]string, ready bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{ServiceAccountName: "sa-" + name},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	return p
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// validateDeep runs the protoc-gen-validate checks of m and of every
// message packed in an Any inside it, which Validate does not descend
// into.
func validateDeep(t testing.TB, m proto.Message) {
	t.Helper()
	if err := validateMsg(m.ProtoReflect()); err != nil {
		t.Errorf("%T: %v", m, err)
	}
}

func validateMsg(m protoreflect.Message) error {
	if v, ok := m.Interface().(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			return err
		}
	}
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return fmt.Errorf("unpack %s: %w", a.GetTypeUrl(), err)
		}
		return validateMsg(inner.ProtoReflect())
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = validateMsg(l.Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					err = validateMsg(mv.Message())
					return err == nil
				})
			}
		default:
			err = validateMsg(v.Message())
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", fd.Name(), err)
		}
		return err == nil
	})
	return err
}

// validateModel validates every xDS resource of m.
func validateModel(t testing.TB, m *Model) {
	t.Helper()
	for _, r := range m.Clusters.List() {
		validateDeep(t, r.Message())
	}
	for _, r := range m.ClusterLoadAssignments.List() {
		validateDeep(t, r.Message())
	}
	for _, r := range m.Listeners.List() {
		validateDeep(t, r.Message())
	}
	for _, r := range m.RouteConfigurations.List() {
		validateDeep(t, r.Message())
		// Envoy also rejects a domain listed twice, which the generated
		// validators do not check.
		seen := map[string]string{}
		for _, vh := range r.Message().VirtualHosts {
			for _, d := range vh.Domains {
				if other, dup := seen[d]; dup {
					t.Errorf("route configuration %s: domain %s in virtual hosts %s and %s", r.Name, d, other, vh.Name)
				}
				seen[d] = vh.Name
			}
		}
	}
}

// wantItem fails t unless a lookup's result (got, ok) is want: absent when
// want is nil, else present and Equal to it.
func wantItem[T interface{ Equals(T) bool }](t *testing.T, got T, ok bool, want *T) {
	t.Helper()
	if want == nil {
		if ok {
			t.Fatalf("got %+v, want none", got)
		}
		return
	}
	if !ok || !got.Equals(*want) {
		t.Fatalf("got %+v (present %v)\nwant %+v", got, ok, *want)
	}
}

// with returns v after f has changed it: a test object one field away from
// what its constructor makes.
func with[T any](v T, f func(T)) T {
	f(v)
	return v
}
