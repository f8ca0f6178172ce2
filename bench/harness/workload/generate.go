package workload

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// NamespaceOf returns the namespace of service svc (and of the pods it
// selects): ns-0 to ns-9.
func NamespaceOf(svc int) string { return "ns-" + strconv.Itoa(svc%10) }

// ServiceName returns the name of service svc, also its pods' app label.
func ServiceName(svc int) string { return "svc-" + strconv.Itoa(svc) }

// PodName returns the name of pod j.
func PodName(j int) string { return "pod-" + strconv.Itoa(j) }

// PodKey returns the key of pod j among n services.
func PodKey(j, n int) string { return NamespaceOf(j%n) + "/" + PodName(j) }

// ServiceKey returns the key of service svc.
func ServiceKey(svc int) string { return NamespaceOf(svc) + "/" + ServiceName(svc) }

// InitialIP returns the IP pod j is generated with, 10.x.y.z.
func InitialIP(j int) string {
	return fmt.Sprintf("10.%d.%d.%d", (j>>16)&255, (j>>8)&255, j&255)
}

var ipSeq atomic.Uint64

// FreshIP returns an IP never returned before in this process; initial
// IPs all start with 10., fresh ones with 100 or more. It is safe for
// concurrent use.
func FreshIP() string {
	c := ipSeq.Add(1)
	return fmt.Sprintf("%d.%d.%d.%d", 100+(c>>24)&127, (c>>16)&255, (c>>8)&255, c&255)
}

// Change is one planned pod-IP change.
type Change struct {
	Pod int    // the pod's index
	Key string // the pod's key
	IP  string // the fresh IP it is given
}

// PlanChanges returns count changes of the pods perm lists, taken in
// turn, among n services. A phase that submits changes back to back
// plans them before its clock starts, so that it times the engine, not
// the making of keys and addresses.
func PlanChanges(perm []int, count, n int) []Change {
	out := make([]Change, count)
	keys := make(map[int]string)
	for i := range out {
		j := perm[i%len(perm)]
		k, ok := keys[j]
		if !ok {
			k = PodKey(j, n)
			keys[j] = k
		}
		out[i] = Change{Pod: j, Key: k, IP: FreshIP()}
	}
	return out
}

// Services returns the n services.
func Services(n int) []Service {
	out := make([]Service, n)
	for i := range out {
		out[i] = Service{Name: ServiceName(i), Namespace: NamespaceOf(i), Selector: map[string]string{"app": ServiceName(i)}}
	}
	return out
}

// Pods returns the m pods of n services: pod j is selected by service
// j%n alone.
func Pods(n, m int) []Pod {
	out := make([]Pod, m)
	for j := range out {
		s := j % n
		out[j] = Pod{Name: PodName(j), Namespace: NamespaceOf(s), Labels: map[string]string{"app": ServiceName(s)}, IP: InitialIP(j)}
	}
	return out
}

// Selects reports whether a non-empty selector matches labels.
func Selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

// SelectorPairs returns the index keys of s's selector, one
// "namespace/key=value" a pair: a pod whose labels hold one of them may be
// selected by s. PairKey builds the same key from a pod's side.
func SelectorPairs(s Service) []string {
	out := make([]string, 0, len(s.Selector))
	for k, v := range s.Selector {
		out = append(out, PairKey(s.Namespace, k, v))
	}
	return out
}

// PairKey returns the index key of one label pair in namespace.
func PairKey(namespace, key, value string) string { return namespace + "/" + key + "=" + value }
