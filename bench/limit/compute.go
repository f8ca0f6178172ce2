package main

import (
	"slices"
	"sort"
)

// outputs are the derived collections, by key.
type outputs struct {
	workloads map[string]workload
	endpoints map[string]endpoints
}

// compute derives every workload and endpoints from the inputs, from
// scratch.
func compute(svcs []service, pods []pod, trustDomain string) outputs {
	bySelector := indexServices(svcs)
	out := outputs{workloads: make(map[string]workload, len(pods)), endpoints: make(map[string]endpoints, len(svcs))}
	ips := make(map[string][]string, len(svcs))
	for _, p := range pods {
		w := workload{name: p.name, namespace: p.namespace, ip: p.ip, trustDomain: trustDomain,
			services: selecting(svcs, bySelector, p)}
		out.workloads[p.key()] = w
		for _, s := range w.services {
			ips[s] = append(ips[s], p.ip)
		}
	}
	for _, s := range svcs {
		k := s.key()
		l := ips[k]
		sort.Strings(l)
		out.endpoints[k] = endpoints{service: k, ips: l}
	}
	return out
}

// indexServices maps "namespace/key=value" to the services whose selector
// holds that pair.
func indexServices(svcs []service) map[string][]int {
	idx := make(map[string][]int, len(svcs))
	for i, s := range svcs {
		for k, v := range s.selector {
			idx[s.namespace+"/"+k+"="+v] = append(idx[s.namespace+"/"+k+"="+v], i)
		}
	}
	return idx
}

// selecting returns the sorted keys of the services whose selector
// matches p's labels, looked up through the index.
func selecting(svcs []service, idx map[string][]int, p pod) []string {
	var keys []string
	for k, v := range p.labels {
		for _, i := range idx[p.namespace+"/"+k+"="+v] {
			if selects(svcs[i].selector, p.labels) {
				keys = append(keys, svcs[i].key())
			}
		}
	}
	if len(p.labels) > 1 { // several labels may hit the same service
		sort.Strings(keys)
		keys = slices.Compact(keys)
	}
	return keys
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
