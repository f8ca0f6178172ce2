package workload

import (
	"maps"
	"slices"
)

// Service is an input: a named label selector in a namespace.
type Service struct {
	Name      string
	Namespace string
	Selector  map[string]string
}

// ResourceName is the service's key, "namespace/name".
func (s Service) ResourceName() string { return s.Namespace + "/" + s.Name }

// GetNamespace serves the engines' namespace filters and indexes.
func (s Service) GetNamespace() string { return s.Namespace }

// GetSelector serves meshd krt's FilterSelects.
func (s Service) GetSelector() map[string]string { return s.Selector }

// GetLabelSelector serves Istio krt's FilterSelects.
func (s Service) GetLabelSelector() map[string]string { return s.Selector }

// Equals is the early-cutoff comparison, so neither engine falls back to
// reflection.
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

// GetNamespace serves the engines' namespace filters.
func (p Pod) GetNamespace() string { return p.Namespace }

// GetLabels serves the engines' label filters.
func (p Pod) GetLabels() map[string]string { return p.Labels }

// Equals is the early-cutoff comparison.
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

// GetNamespace serves the engines' namespace filters.
func (w Workload) GetNamespace() string { return w.Namespace }

// Equals is the early-cutoff comparison.
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

// Equals is the early-cutoff comparison.
func (e Endpoints) Equals(o Endpoints) bool {
	return e.Service == o.Service && slices.Equal(e.IPs, o.IPs)
}
