package main

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// verify checks every output against a from-scratch computation from the
// inputs, all read at one committed version.
func verify(gr *graph, n, m int, trustDomain string) error {
	var pods []Pod
	var wls []Workload
	var eps []Endpoints
	gr.g.Read(func(uint64) {
		pods, wls, eps = gr.pods.List(), gr.workloads.List(), gr.endpoints.List()
	})
	if len(pods) != m {
		return fmt.Errorf("pods: have %d, want %d", len(pods), m)
	}
	if len(wls) != m {
		return fmt.Errorf("workloads: have %d, want %d", len(wls), m)
	}
	if len(eps) != n {
		return fmt.Errorf("endpoints: have %d, want %d", len(eps), n)
	}
	want := make(map[string][]string, n)
	byKey := make(map[string]Pod, m)
	for _, p := range pods {
		sk := p.Namespace + "/" + p.Labels["app"]
		want[sk] = append(want[sk], p.IP)
		byKey[p.ResourceName()] = p
	}
	for _, w := range wls {
		p, ok := byKey[w.ResourceName()]
		switch {
		case !ok:
			return fmt.Errorf("workload %s has no pod", w.ResourceName())
		case w.IP != p.IP:
			return fmt.Errorf("workload %s: ip %s, want %s", w.ResourceName(), w.IP, p.IP)
		case len(w.Services) != 1 || w.Services[0] != p.Namespace+"/"+p.Labels["app"]:
			return fmt.Errorf("workload %s: services %v", w.ResourceName(), w.Services)
		case w.TrustDomain != trustDomain:
			return fmt.Errorf("workload %s: trust domain %q, want %q", w.ResourceName(), w.TrustDomain, trustDomain)
		}
	}
	for _, e := range eps {
		exp := want[e.Service]
		sort.Strings(exp)
		if !slices.Equal(exp, e.IPs) {
			return fmt.Errorf("endpoints %s: have %d ips, want %d (%v vs %v)", e.Service, len(e.IPs), len(exp), head(e.IPs), head(exp))
		}
	}
	return nil
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// verifyEventually retries verify for up to d and returns the retries it
// needed. krt commits synchronously, so any retry at all is a finding; the
// loop is there to report the same metric as bench/istio-krt.
func verifyEventually(gr *graph, n, m int, trustDomain string, d time.Duration, what string) int {
	deadline := time.Now().Add(d)
	for i := 0; ; i++ {
		err := verify(gr, n, m, trustDomain)
		if err == nil {
			return i
		}
		if time.Now().After(deadline) {
			fatalf("VERIFY FAILED (%s): %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
