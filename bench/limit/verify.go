package main

import (
	"fmt"
	"slices"
	"sort"

	"github.com/meshd/meshd/bench/harness/workload"
)

// verify checks the outputs against the generator's arithmetic: pod j is
// selected by service j%n alone and keeps its initial IP.
func verify(out outputs, n, m int, trustDomain string) error {
	if len(out.workloads) != m || len(out.endpoints) != n {
		return fmt.Errorf("%d workloads and %d endpoints, want %d and %d", len(out.workloads), len(out.endpoints), m, n)
	}
	want := make([][]string, n)
	for j := range m {
		key := workload.PodKey(j, n)
		w, ok := out.workloads[key]
		switch {
		case !ok:
			return fmt.Errorf("no workload %s", key)
		case w.IP != workload.InitialIP(j) || w.TrustDomain != trustDomain:
			return fmt.Errorf("workload %s: ip %s, trust domain %s", key, w.IP, w.TrustDomain)
		case !slices.Equal(w.Services, []string{workload.ServiceKey(j % n)}):
			return fmt.Errorf("workload %s: services %v", key, w.Services)
		}
		want[j%n] = append(want[j%n], workload.InitialIP(j))
	}
	for i := range n {
		sort.Strings(want[i])
		if got := out.endpoints[workload.ServiceKey(i)]; !slices.Equal(got.IPs, want[i]) {
			return fmt.Errorf("endpoints %s: %d ips, want %d", workload.ServiceKey(i), len(got.IPs), len(want[i]))
		}
	}
	return nil
}
