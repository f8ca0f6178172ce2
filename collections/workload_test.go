package collections

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/sources/meshconfig"
)

// workloadCase is a pod and the workload TestWorkloads wants of it (nil:
// none), among node-a (zoned eu-west/eu-west-1a), node-b (no labels) and
// the services of checkWorkload.
type workloadCase struct {
	name            string
	pod             *corev1.Pod
	defaultLocality string
	want            *Workload
}

func TestWorkloads(t *testing.T) {
	for _, tc := range workloadCases() {
		t.Run(tc.name, func(t *testing.T) { checkWorkload(t, tc) })
	}
}

func workloadCases() []workloadCase {
	web := map[string]string{"app": "web"}
	return []workloadCase{
		{
			name: "ready pod on a zoned node, selected by a service",
			pod:  with(pod("ns", "web-0", "10.0.0.1", web, true), func(p *corev1.Pod) { p.Spec.NodeName = "node-a" }),
			want: &Workload{Name: "web-0", Namespace: "ns", IP: "10.0.0.1", Labels: web, ServiceAccount: "sa-web-0",
				Node: "node-a", Ready: true, Locality: Locality{Region: "eu-west", Zone: "eu-west-1a"}, Services: []string{"ns/web"}},
		},
		{
			name:            "not ready, node without labels: default locality",
			pod:             with(pod("ns", "web-1", "10.0.0.2", web, false), func(p *corev1.Pod) { p.Spec.NodeName = "node-b" }),
			defaultLocality: "us/us-1/rack7",
			want: &Workload{Name: "web-1", Namespace: "ns", IP: "10.0.0.2", Labels: web, ServiceAccount: "sa-web-1",
				Node: "node-b", Locality: Locality{Region: "us", Zone: "us-1", SubZone: "rack7"}, Services: []string{"ns/web"}},
		},
		{
			name: "pending pod with no IP, unknown node",
			pod: with(pod("ns", "job", "", map[string]string{"app": "job"}, false), func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodPending
				p.Spec.ServiceAccountName = ""
				p.Spec.NodeName = "gone"
			}),
			want: &Workload{Name: "job", Namespace: "ns", Labels: map[string]string{"app": "job"}, ServiceAccount: "default", Node: "gone"},
		},
		{
			name: "ready condition true but terminating",
			pod: with(pod("ns", "web-2", "10.0.0.3", web, true), func(p *corev1.Pod) {
				p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			}),
			want: &Workload{Name: "web-2", Namespace: "ns", IP: "10.0.0.3", Labels: web, ServiceAccount: "sa-web-2", Services: []string{"ns/web"}},
		},
		{
			name: "running without a ready condition",
			pod:  with(pod("ns", "web-3", "10.0.0.4", web, true), func(p *corev1.Pod) { p.Status.Conditions = nil }),
			want: &Workload{Name: "web-3", Namespace: "ns", IP: "10.0.0.4", Labels: web, ServiceAccount: "sa-web-3", Services: []string{"ns/web"}},
		},
		{
			name: "named container ports",
			pod: with(pod("ns", "web-4", "10.0.0.5", web, true), func(p *corev1.Pod) {
				p.Spec.Containers = []corev1.Container{{Ports: []corev1.ContainerPort{
					{Name: "grpc", ContainerPort: 9000}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 1},
				}}}
			}),
			want: &Workload{Name: "web-4", Namespace: "ns", IP: "10.0.0.5", Labels: web, ServiceAccount: "sa-web-4", Ready: true,
				Services: []string{"ns/web"}, NamedPorts: map[string]int32{"grpc": 9000}},
		},
		{
			name: "finished pod is no workload",
			pod:  with(pod("ns", "done", "10.0.0.6", web, false), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		},
	}
}

// checkWorkload sets tc's pod among two nodes and three services and
// compares the workload derived from it with tc.want.
func checkWorkload(t *testing.T, tc workloadCase) {
	_, in, m := newTestModel()
	if tc.defaultLocality != "" {
		mc := meshconfig.Default()
		mc.DefaultLocality = tc.defaultLocality
		in.Set(mc)
	}
	zoned := map[string]string{LabelTopologyRegion: "eu-west", LabelTopologyZone: "eu-west-1a"}
	in.Set(node("node-a", zoned), node("node-b", nil))
	web := map[string]string{"app": "web"}
	in.Set(
		service("ns", "web", web, svcPort("http", 80, 8080)),
		service("other", "web", web, svcPort("http", 80, 8080)), // another namespace: never selects
		service("ns", "all", nil, svcPort("http", 80, 8080)),    // no selector: selects nothing
	)
	in.Set(tc.pod)
	got, ok := m.Workloads.Get(tc.pod.Namespace + "/" + tc.pod.Name)
	wantItem(t, got, ok, tc.want)
}

func TestWorkloadFollowsNodeAndServices(t *testing.T) {
	_, in, m := newTestModel()
	p := pod("ns", "web-0", "10.0.0.1", map[string]string{"app": "web"}, true)
	p.Spec.NodeName = "n1"
	in.Set(p)
	w, _ := m.Workloads.Get("ns/web-0")
	if w.Locality != (Locality{}) || len(w.Services) != 0 {
		t.Fatalf("before node and service: %+v", w)
	}
	in.Set(node("n1", map[string]string{LabelTopologyZone: "z1"}))
	in.Set(service("ns", "web", map[string]string{"app": "web"}, svcPort("http", 80, 80)))
	w, _ = m.Workloads.Get("ns/web-0")
	if w.Locality != (Locality{Zone: "z1"}) || len(w.Services) != 1 {
		t.Fatalf("after node and service: %+v", w)
	}
	del[*corev1.Service](in, "ns/web")
	w, _ = m.Workloads.Get("ns/web-0")
	if len(w.Services) != 0 {
		t.Fatalf("after service delete: %+v", w)
	}
}

func TestParseLocality(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Locality
	}{
		{"", Locality{}},
		{"r", Locality{Region: "r"}},
		{"r/z", Locality{Region: "r", Zone: "z"}},
		{"r/z/s", Locality{Region: "r", Zone: "z", SubZone: "s"}},
		{"r/z/s/x", Locality{Region: "r", Zone: "z", SubZone: "s/x"}},
	} {
		if got := ParseLocality(tc.in); got != tc.want {
			t.Errorf("ParseLocality(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
