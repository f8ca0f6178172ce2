package sources

import (
	"maps"
	"reflect"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func labelledPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: labels}}
}

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Pods of equal labels share one map; pods of other labels do not, and a
// pod's labels read as they were.
func TestPodInfosShareEqualLabels(t *testing.T) {
	a := NewPodInfo(labelledPod("a", map[string]string{"app": "web", "pod-template-hash": "5d8f"}))
	b := NewPodInfo(labelledPod("b", map[string]string{"pod-template-hash": "5d8f", "app": "web"}))
	c := NewPodInfo(labelledPod("c", map[string]string{"app": "web", "pod-template-hash": "77aa"}))
	if !sameMap(a.Labels, b.Labels) {
		t.Errorf("pods a and b, of equal labels, hold two maps")
	}
	if sameMap(a.Labels, c.Labels) || c.Labels["pod-template-hash"] != "77aa" {
		t.Errorf("pod c's labels %v are pod a's %v", c.Labels, a.Labels)
	}
	if want := map[string]string{"app": "web", "pod-template-hash": "5d8f"}; !maps.Equal(b.Labels, want) {
		t.Errorf("pod b's labels %v, want %v", b.Labels, want)
	}
	if d := b.DeepCopyObject().(*PodInfo); sameMap(d.Labels, b.Labels) || !maps.Equal(d.Labels, b.Labels) {
		t.Errorf("a deep copy's labels %v are not a copy of %v", d.Labels, b.Labels)
	}
	runtime.KeepAlive([]*PodInfo{a, b, c})
}

// A label set no PodInfo holds leaves the table, so that the sets of
// pods long deleted are not kept.
func TestLabelSetsForgetUnheldSets(t *testing.T) {
	before := podLabels.size()
	pods := make([]*PodInfo, 100)
	for i := range pods {
		pods[i] = NewPodInfo(labelledPod("p", map[string]string{"app": "gone", "n": string(rune('a' + i%50))}))
	}
	if n := podLabels.size() - before; n != 50 {
		t.Fatalf("the table grew by %d sets for 50 distinct label sets", n)
	}
	runtime.KeepAlive(pods) // their last use: from here they are garbage
	// The cleanups run after a collection, on a goroutine of their own.
	for i := 0; i < 1000 && podLabels.size() > before; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := podLabels.size() - before; n > 0 {
		t.Errorf("%d label sets stayed in the table once no pod held them", n)
	}
}
