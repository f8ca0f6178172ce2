package main

import (
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
)

// The types and generators below define the same workload as bench/krt's:
// the same keys, namespaces, labels and IPs, so that both engines are given
// identical inputs. They are repeated here, not imported, because this
// module must not depend on the main one (nor the main one on Istio).

// Service is an input: a named label selector in a namespace.
type Service struct {
	Name      string
	Namespace string
	Selector  map[string]string
}

// ResourceName is the service's key, "namespace/name" (krt.ResourceNamer).
func (s Service) ResourceName() string { return s.Namespace + "/" + s.Name }

// GetNamespace serves krt.NewNamespaceIndex.
func (s Service) GetNamespace() string { return s.Namespace }

// GetLabelSelector serves krt.FilterSelects (krt.LabelSelectorer).
func (s Service) GetLabelSelector() map[string]string { return s.Selector }

// Equals tells krt whether a recomputed service changed (krt.Equaler),
// so that it never falls back to reflection.
func (s Service) Equals(o Service) bool {
	return s.Name == o.Name && s.Namespace == o.Namespace && maps.Equal(s.Selector, o.Selector)
}

// Pod is an input: a labelled IP in a namespace.
type Pod struct {
	Name      string
	Namespace string
	Labels    map[string]string
	IP        string
}

// ResourceName is the pod's key, "namespace/name".
func (p Pod) ResourceName() string { return p.Namespace + "/" + p.Name }

// GetNamespace serves namespace lookups.
func (p Pod) GetNamespace() string { return p.Namespace }

// GetLabels serves krt.FilterLabel (krt.Labeler).
func (p Pod) GetLabels() map[string]string { return p.Labels }

// Equals is the change comparison.
func (p Pod) Equals(o Pod) bool {
	return p.Name == o.Name && p.Namespace == o.Namespace && p.IP == o.IP && maps.Equal(p.Labels, o.Labels)
}

// MeshConfig is the singleton input every workload reads.
type MeshConfig struct {
	TrustDomain string
}

// ResourceName is the singleton's key; there is only one.
func (MeshConfig) ResourceName() string { return "mesh" }

// Workload is derived per pod.
type Workload struct {
	Name        string
	Namespace   string
	IP          string
	Services    []string // keys of the services selecting the pod, sorted
	TrustDomain string   // from the mesh config
}

// ResourceName is the workload's key, the key of its pod.
func (w Workload) ResourceName() string { return w.Namespace + "/" + w.Name }

// Equals is the change comparison.
func (w Workload) Equals(o Workload) bool {
	return w.Name == o.Name && w.Namespace == o.Namespace && w.IP == o.IP &&
		w.TrustDomain == o.TrustDomain && slices.Equal(w.Services, o.Services)
}

// Endpoints is derived per service.
type Endpoints struct {
	Service string   // the service's key
	IPs     []string // sorted
}

// ResourceName is the key of the service.
func (e Endpoints) ResourceName() string { return e.Service }

// Equals is the change comparison.
func (e Endpoints) Equals(o Endpoints) bool {
	return e.Service == o.Service && slices.Equal(e.IPs, o.IPs)
}

func namespaceOf(svc int) string { return fmt.Sprintf("ns-%d", svc%10) }
func serviceName(svc int) string { return fmt.Sprintf("svc-%d", svc) }
func podName(j int) string       { return fmt.Sprintf("pod-%d", j) }
func podKey(j, n int) string     { return namespaceOf(j%n) + "/" + podName(j) }
func serviceKey(svc int) string  { return namespaceOf(svc) + "/" + serviceName(svc) }

func initialIP(j int) string {
	return fmt.Sprintf("10.%d.%d.%d", (j>>16)&255, (j>>8)&255, j&255)
}

var ipSeq atomic.Uint64

// freshIP returns an IP never used before in this process; initial IPs all
// start with 10., fresh ones with 100 or more.
func freshIP() string {
	c := ipSeq.Add(1)
	return fmt.Sprintf("%d.%d.%d.%d", 100+(c>>24)&127, (c>>16)&255, (c>>8)&255, c&255)
}

func genServices(n int) []Service {
	out := make([]Service, n)
	for i := range out {
		out[i] = Service{Name: serviceName(i), Namespace: namespaceOf(i), Selector: map[string]string{"app": serviceName(i)}}
	}
	return out
}

func genPods(n, m int) []Pod {
	out := make([]Pod, m)
	for j := range out {
		s := j % n
		out[j] = Pod{Name: podName(j), Namespace: namespaceOf(s), Labels: map[string]string{"app": serviceName(s)}, IP: initialIP(j)}
	}
	return out
}

// selects reports whether a non-empty selector matches labels.
func selects(selector, labels map[string]string) bool {
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
