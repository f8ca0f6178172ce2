package sources

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PodInfo is the part of a Pod the model reads, and what Inputs.Pods
// holds: a full *corev1.Pod is about 1.7 KB with its conditions, container
// specs and statuses, most of it never read, and at 100k pods it was the
// largest part of the heap and of what GC scans. The sources convert each
// Pod with NewPodInfo as they read it (the kube source before the informer
// caches it), so no full Pod is kept.
//
// It is a Kubernetes-style object (metav1.Object, runtime.Object) so that
// informer caches, keys and equality work on it as on the API types; of
// the metadata only what the model reads is kept.
type PodInfo struct {
	// ObjectMeta holds Name, Namespace, Labels, ResourceVersion,
	// DeletionTimestamp and the AnnotationCluster annotation alone.
	metav1.ObjectMeta
	IP             string
	ServiceAccount string
	Node           string
	Phase          corev1.PodPhase
	// NamedPorts maps the name of each named TCP container port to its
	// number; nil when there is none.
	NamedPorts map[string]int32
	// Ready is the Ready condition's status being True.
	Ready bool
	// labels holds the shared label set that Labels is, so that the set
	// stays interned while the PodInfo lives (labelSets); nil when the
	// labels are empty or are a copy's.
	labels *labelSet
}

// NewPodInfo returns the part of pod the model reads. Its labels map is
// shared with every PodInfo of equal labels (the first such pod's map),
// so pod's must not be changed afterwards (it is an informer's copy, or
// a decoded file), and neither may the PodInfo's.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	p := &PodInfo{
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			Labels:            pod.Labels,
			ResourceVersion:   pod.ResourceVersion,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		IP:             pod.Status.PodIP,
		ServiceAccount: pod.Spec.ServiceAccountName,
		Node:           pod.Spec.NodeName,
		Phase:          pod.Status.Phase,
	}
	if c, ok := pod.Annotations[AnnotationCluster]; ok {
		p.Annotations = map[string]string{AnnotationCluster: c}
	}
	if p.labels = podLabels.intern(pod.Labels); p.labels != nil {
		p.Labels = p.labels.m
	}
	p.Ready = readyCondition(pod)
	p.NamedPorts = namedPorts(pod)
	return p
}

// readyCondition reports whether pod's Ready condition is True.
func readyCondition(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// namedPorts returns the named TCP ports of pod's containers (a later
// container's port wins a repeated name), or nil.
func namedPorts(pod *corev1.Pod) map[string]int32 {
	var out map[string]int32
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "" || (p.Protocol != "" && p.Protocol != corev1.ProtocolTCP) {
				continue
			}
			if out == nil {
				out = map[string]int32{}
			}
			out[p.Name] = p.ContainerPort
		}
	}
	return out
}

// GetObjectKind returns an empty kind: a PodInfo is never encoded.
func (p *PodInfo) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject returns a deep copy of p, for the informer machinery.
func (p *PodInfo) DeepCopyObject() runtime.Object {
	out := *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.labels = nil // the copy's labels are its own
	out.NamedPorts = maps.Clone(p.NamedPorts)
	return &out
}

// PodInfoTransform is a client-go transform (cache.TransformFunc) that
// turns a *corev1.Pod into its *PodInfo, so an informer caches only that.
// Anything else, such as a tombstone of an already converted pod, passes
// unchanged.
func PodInfoTransform(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return NewPodInfo(pod), nil
	}
	return obj, nil
}
