package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// verify checks the outputs against the generator's arithmetic: pod j is
// selected by service j%n alone and keeps its initial IP.
func verify(out outputs, n, m int, trustDomain string) error {
	if len(out.workloads) != m || len(out.endpoints) != n {
		return fmt.Errorf("%d workloads and %d endpoints, want %d and %d", len(out.workloads), len(out.endpoints), m, n)
	}
	want := make([][]string, n)
	for j := range m {
		key := namespaceOf(j%n) + "/pod-" + strconv.Itoa(j)
		w, ok := out.workloads[key]
		switch {
		case !ok:
			return fmt.Errorf("no workload %s", key)
		case w.ip != initialIP(j) || w.trustDomain != trustDomain:
			return fmt.Errorf("workload %s: ip %s, trust domain %s", key, w.ip, w.trustDomain)
		case !slices.Equal(w.services, []string{serviceKey(j % n)}):
			return fmt.Errorf("workload %s: services %v", key, w.services)
		}
		want[j%n] = append(want[j%n], initialIP(j))
	}
	for i := range n {
		sort.Strings(want[i])
		if got := out.endpoints[serviceKey(i)]; !slices.Equal(got.ips, want[i]) {
			return fmt.Errorf("endpoints %s: %d ips, want %d", serviceKey(i), len(got.ips), len(want[i]))
		}
	}
	return nil
}
