package workload

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Snapshot is what an engine holds of the workload at one moment: its
// input pods and its derived workloads and endpoints, in any order.
type Snapshot struct {
	Pods      []Pod
	Workloads []Workload
	Endpoints []Endpoints
}

// Verify checks s, from n services and m pods, against a computation from
// scratch from its pods: every pod has a workload with the pod's IP, its
// one service and trustDomain, and every service's endpoints are the
// sorted IPs of its pods. It returns the first difference.
func Verify(s Snapshot, n, m int, trustDomain string) error {
	switch {
	case len(s.Pods) != m:
		return fmt.Errorf("pods: have %d, want %d", len(s.Pods), m)
	case len(s.Workloads) != m:
		return fmt.Errorf("workloads: have %d, want %d", len(s.Workloads), m)
	case len(s.Endpoints) != n:
		return fmt.Errorf("endpoints: have %d, want %d", len(s.Endpoints), n)
	}
	want := make(map[string][]string, n)
	byKey := make(map[string]Pod, m)
	for _, p := range s.Pods {
		sk := p.Namespace + "/" + p.Labels["app"]
		want[sk] = append(want[sk], p.IP)
		byKey[p.ResourceName()] = p
	}
	for _, w := range s.Workloads {
		if err := verifyWorkload(w, byKey, trustDomain); err != nil {
			return err
		}
	}
	for _, e := range s.Endpoints {
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

// VerifyEventually runs Verify on what read returns until it passes or d
// has passed, 50ms apart. It returns the retries it needed, and the last
// error if Verify never passed. An engine that derives asynchronously may
// need retries while a change propagates; one that commits synchronously
// needs none, so any retry is a finding.
func VerifyEventually(read func() Snapshot, n, m int, trustDomain string, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for i := 0; ; i++ {
		err := Verify(read(), n, m, trustDomain)
		if err == nil {
			return i, nil
		}
		if time.Now().After(deadline) {
			return i, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
