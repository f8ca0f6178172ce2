package sources_test

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/meshd/meshd/sources"
)

func fullPod() *corev1.Pod {
	now := metav1.Now()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web-1", ResourceVersion: "7", DeletionTimestamp: &now,
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{sources.AnnotationCluster: "west", "other": "dropped"},
			UID:         "u-1",
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "web-sa",
			NodeName:           "node-a",
			Containers: []corev1.Container{
				{Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 9}}},
				{Ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			},
		},
	}
}

func TestNewPodInfoKeepsWhatTheModelReads(t *testing.T) {
	pod := fullPod()
	p := sources.NewPodInfo(pod)
	if p.Name != "web-1" || p.Namespace != "shop" || p.ResourceVersion != "7" || p.DeletionTimestamp == nil {
		t.Errorf("metadata %+v", p.ObjectMeta)
	}
	if p.UID != "" || len(p.Annotations) != 1 || sources.ClusterOf(p) != "west" {
		t.Errorf("kept UID %q and annotations %v; want only the cluster annotation", p.UID, p.Annotations)
	}
	if !maps.Equal(p.Labels, pod.Labels) {
		t.Errorf("labels %v", p.Labels)
	}
	if p.IP != "10.0.0.1" || p.ServiceAccount != "web-sa" || p.Node != "node-a" || p.Phase != corev1.PodRunning || !p.Ready {
		t.Errorf("status and spec %+v", p)
	}
	if want := map[string]int32{"http": 8080, "grpc": 9090}; !maps.Equal(p.NamedPorts, want) {
		t.Errorf("named ports %v, want %v", p.NamedPorts, want)
	}
	if sources.Key(p) != "shop/web-1" || sources.ClusterKey(p) != "west/shop/web-1" {
		t.Errorf("keys %q, %q", sources.Key(p), sources.ClusterKey(p))
	}
}

func TestNewPodInfoNotReady(t *testing.T) {
	pod := fullPod()
	pod.Status.Conditions[1].Status = corev1.ConditionFalse
	pod.Annotations = nil
	pod.Spec.Containers = nil
	p := sources.NewPodInfo(pod)
	if p.Ready || p.Annotations != nil || p.NamedPorts != nil {
		t.Errorf("got ready %v, annotations %v, named ports %v", p.Ready, p.Annotations, p.NamedPorts)
	}
	pod.Status.Conditions = nil
	if sources.NewPodInfo(pod).Ready {
		t.Error("ready without a Ready condition")
	}
}

func TestPodInfoDeepCopy(t *testing.T) {
	p := sources.NewPodInfo(fullPod())
	c := p.DeepCopyObject().(*sources.PodInfo)
	c.Labels["app"] = "changed"
	c.NamedPorts["http"] = 1
	if p.Labels["app"] != "web" || p.NamedPorts["http"] != 8080 {
		t.Errorf("copy shares maps with the original: %v %v", p.Labels, p.NamedPorts)
	}
	if !sources.Equal(p, sources.NewPodInfo(fullPod())) {
		t.Error("PodInfos of the same pod version differ")
	}
}

func TestPodInfoTransform(t *testing.T) {
	out, err := sources.PodInfoTransform(fullPod())
	if p, ok := out.(*sources.PodInfo); err != nil || !ok || p.IP != "10.0.0.1" {
		t.Fatalf("transform of a pod = %#v, %v", out, err)
	}
	key, err := cache.MetaNamespaceKeyFunc(out)
	if err != nil || key != "shop/web-1" {
		t.Errorf("informer key %q, %v", key, err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: out}
	if got, _ := sources.PodInfoTransform(tomb); got != tomb {
		t.Errorf("tombstone changed to %#v", got)
	}
}
