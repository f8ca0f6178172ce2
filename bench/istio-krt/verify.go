package main

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// verify checks every output against a from-scratch computation from the
// inputs. Istio's collections are read one after the other, not at one
// version, and derive asynchronously: a mismatch may be a state still
// propagating, which verifyEventually retries.
func verify(gr *graph, n, m int, trustDomain string) error {
	pods, wls, eps := gr.pods.List(), gr.workloads.List(), gr.endpoints.List()
	switch {
	case len(pods) != m:
		return fmt.Errorf("pods: have %d, want %d", len(pods), m)
	case len(wls) != m:
		return fmt.Errorf("workloads: have %d, want %d", len(wls), m)
	case len(eps) != n:
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
		if err := verifyWorkload(w, byKey, trustDomain); err != nil {
			return err
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

func verifyWorkload(w Workload, pods map[string]Pod, trustDomain string) error {
	p, ok := pods[w.ResourceName()]
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
	return nil
}

func head(s []string) []string { return s[:min(len(s), 5)] }

// verifyEventually retries verify for up to d and returns the retries it
// needed; it ends the run when the outputs never agree.
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
