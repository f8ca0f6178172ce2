package workload

import (
	"slices"
	"sort"
	"strings"
)

// Derive returns p's workload, given the services selecting it (in any
// order, each once) and the mesh config's trust domain.
func Derive(p Pod, selecting []Service, trustDomain string) Workload {
	names := make([]string, len(selecting))
	for i, s := range selecting {
		names[i] = s.ResourceName()
	}
	sort.Strings(names)
	return Workload{Name: p.Name, Namespace: p.Namespace, IP: p.IP, Services: names, TrustDomain: trustDomain}
}

// EndpointsOf returns s's endpoints, given the workloads of the pods it
// selects, in any order.
func EndpointsOf(s Service, selected []Workload) Endpoints {
	ips := make([]string, len(selected))
	for i, w := range selected {
		ips[i] = w.IP
	}
	return EndpointsOfIPs(s.ResourceName(), ips)
}

// EndpointsOfIPs returns the endpoints of the service named service
// (its ResourceName), given the IPs of the workloads it selects, in any
// order; it keeps ips and sorts it.
func EndpointsOfIPs(service string, ips []string) Endpoints {
	sort.Strings(ips)
	return Endpoints{Service: service, IPs: ips}
}

// Dedupe returns svcs sorted by key with repeats dropped: a pod with
// several labels finds a service once per pair it matches.
func Dedupe(svcs []Service) []Service {
	slices.SortFunc(svcs, func(a, b Service) int { return strings.Compare(a.ResourceName(), b.ResourceName()) })
	return slices.CompactFunc(svcs, func(a, b Service) bool { return a.ResourceName() == b.ResourceName() })
}
