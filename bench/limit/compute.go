package main

import (
	"slices"
	"sort"

	"github.com/meshd/meshd/bench/harness/workload"
)

// outputs are the derived collections, by key.
type outputs struct {
	workloads map[string]workload.Workload
	endpoints map[string]workload.Endpoints
}

// compute derives every workload and endpoints from the inputs, from
// scratch.
func compute(svcs []workload.Service, pods []workload.Pod, trustDomain string) outputs {
	bySelector := indexServices(svcs)
	out := outputs{
		workloads: make(map[string]workload.Workload, len(pods)),
		endpoints: make(map[string]workload.Endpoints, len(svcs)),
	}
	ips := make(map[string][]string, len(svcs))
	for _, p := range pods {
		w := workload.Workload{Name: p.Name, Namespace: p.Namespace, IP: p.IP, TrustDomain: trustDomain,
			Services: selecting(svcs, bySelector, p)}
		out.workloads[p.ResourceName()] = w
		for _, s := range w.Services {
			ips[s] = append(ips[s], p.IP)
		}
	}
	for _, s := range svcs {
		k := s.ResourceName()
		l := ips[k]
		sort.Strings(l)
		out.endpoints[k] = workload.Endpoints{Service: k, IPs: l}
	}
	return out
}

// indexServices maps "namespace/key=value" to the services whose selector
// holds that pair.
func indexServices(svcs []workload.Service) map[string][]int {
	idx := make(map[string][]int, len(svcs))
	for i, s := range svcs {
		for _, pair := range workload.SelectorPairs(s) {
			idx[pair] = append(idx[pair], i)
		}
	}
	return idx
}

// selecting returns the sorted keys of the services whose selector
// matches p's labels, looked up through the index.
func selecting(svcs []workload.Service, idx map[string][]int, p workload.Pod) []string {
	var keys []string
	for k, v := range p.Labels {
		for _, i := range idx[workload.PairKey(p.Namespace, k, v)] {
			if workload.Selects(svcs[i].Selector, p.Labels) {
				keys = append(keys, svcs[i].ResourceName())
			}
		}
	}
	if len(p.Labels) > 1 { // several labels may hit the same service
		sort.Strings(keys)
		keys = slices.Compact(keys)
	}
	return keys
}
