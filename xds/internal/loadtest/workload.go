package main

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshd/meshd/collections"
)

// mesh is the load's objects: service i in namespace ns-(i%20) selects
// app=app-i; pod j belongs to service j%services.
type mesh struct {
	services, pods int
	nextIP         uint32
	// version stamps each pod written, as the API server's resourceVersion
	// does, so the sources compare a rewrite as an informer's object is.
	version uint64
}

func (m *mesh) serviceName(i int) (name, ns string) {
	return "app-" + strconv.Itoa(i), "ns-" + strconv.Itoa(i%20)
}

// cluster is the name of service i's cluster and load assignment.
func (m *mesh) cluster(i int) string {
	name, ns := m.serviceName(i)
	return collections.ClusterName(8080, collections.Hostname(name, ns, "cluster.local"))
}

func (m *mesh) service(i int) *corev1.Service {
	name, ns := m.serviceName(i)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			ClusterIP: fmt.Sprintf("10.96.%d.%d", i/256%256, i%256),
			Selector:  map[string]string{"app": name},
			Ports:     []corev1.ServicePort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// ip returns an address never handed out before by this mesh.
func (m *mesh) ip() string {
	m.nextIP++
	v := m.nextIP
	return fmt.Sprintf("%d.%d.%d.%d", 10+(v>>24)%100, (v>>16)&255, (v>>8)&255, v&255)
}

func (m *mesh) pod(j int, ip string) *corev1.Pod {
	name, ns := m.serviceName(j % m.services)
	m.version++
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-" + strconv.Itoa(j), Namespace: ns, Labels: map[string]string{"app": name},
			ResourceVersion: strconv.FormatUint(m.version, 10),
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
}
