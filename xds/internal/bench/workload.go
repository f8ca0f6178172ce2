package main

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/sources"
)

// workload is the anchors' mesh: n services, m pods, pod j in service j%n.
type workload struct {
	n, m  int
	ips   []string
	fresh int
}

func newWorkload(n, m int) *workload {
	w := &workload{n: n, m: m, ips: make([]string, m)}
	for j := range m {
		w.ips[j] = fmt.Sprintf("10.%d.%d.%d", (j>>16)&255, (j>>8)&255, j&255)
	}
	return w
}

func svcName(i int) string { return "svc-" + strconv.Itoa(i) }
func svcNS(i int) string   { return "ns-" + strconv.Itoa(i%10) }

func (w *workload) cluster(i int) string {
	return collections.ClusterName(7070, collections.Hostname(svcName(i), svcNS(i), "cluster.local"))
}

// subscribedServices returns the services client i asks for by name when
// each asks for k of n: i*k … i*k+k-1 (mod n), so that every service has
// about p*k/n subscribers. The clients and the snapshot baseline share it.
func subscribedServices(i, k, n int) []int {
	out := make([]int, k)
	for j := range out {
		out[j] = (i*k + j) % n
	}
	return out
}

// listenerName is the name of service i's listener, the target a gRPC
// proxyless client dials.
func listenerName(i int) string {
	return collections.Hostname(svcName(i), svcNS(i), "cluster.local") + ":7070"
}

// freshIP returns an address no pod had: 1xx.x.y.z.
func (w *workload) freshIP() string {
	w.fresh++
	f := w.fresh
	return fmt.Sprintf("%d.%d.%d.%d", 100+(f>>24)%100, (f>>16)&255, (f>>8)&255, f&255)
}

func (w *workload) services() []*corev1.Service {
	out := make([]*corev1.Service, w.n)
	for i := range out {
		out[i] = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: svcNS(i), Name: svcName(i)},
			Spec: corev1.ServiceSpec{
				Selector:  map[string]string{"app": svcName(i)},
				ClusterIP: "10.96.0.1",
				Ports: []corev1.ServicePort{{
					Name: "grpc", Port: 7070, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt(7070),
				}},
			},
		}
	}
	return out
}

// pods returns every pod as the sources store it, its sources.PodInfo.
func (w *workload) pods() []*sources.PodInfo {
	out := make([]*sources.PodInfo, w.m)
	for j := range out {
		out[j] = sources.NewPodInfo(w.pod(j, w.ips[j]))
	}
	return out
}

func (w *workload) pod(j int, ip string) *corev1.Pod {
	i := j % w.n
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: svcNS(i), Name: "pod-" + strconv.Itoa(j), Labels: map[string]string{"app": svcName(i)}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}
