package workload

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// scratch derives the outputs of svcs and pods the slow, obvious way.
func scratch(svcs []Service, pods []Pod, trustDomain string) Snapshot {
	s := Snapshot{Pods: pods}
	ips := map[string][]string{}
	for _, p := range pods {
		w := Workload{Name: p.Name, Namespace: p.Namespace, IP: p.IP, TrustDomain: trustDomain}
		for _, sv := range svcs {
			if sv.Namespace == p.Namespace && Selects(sv.Selector, p.Labels) {
				w.Services = append(w.Services, sv.ResourceName())
				ips[sv.ResourceName()] = append(ips[sv.ResourceName()], p.IP)
			}
		}
		s.Workloads = append(s.Workloads, w)
	}
	for _, sv := range svcs {
		l := ips[sv.ResourceName()]
		sort.Strings(l)
		s.Endpoints = append(s.Endpoints, Endpoints{Service: sv.ResourceName(), IPs: l})
	}
	return s
}

func TestGenerated(t *testing.T) {
	const n, m = 12, 30
	svcs, pods := Services(n), Pods(n, m)
	if got := svcs[11].ResourceName(); got != "ns-1/svc-11" || got != ServiceKey(11) {
		t.Errorf("service 11 is %s (ServiceKey %s), want ns-1/svc-11", got, ServiceKey(11))
	}
	if got := pods[25].ResourceName(); got != "ns-1/pod-25" || got != PodKey(25, n) {
		t.Errorf("pod 25 is %s (PodKey %s), want ns-1/pod-25", got, PodKey(25, n))
	}
	if pods[25].IP != "10.0.0.25" || InitialIP(70000) != "10.1.17.112" {
		t.Errorf("initial IPs %s, %s", pods[25].IP, InitialIP(70000))
	}
	if err := Verify(scratch(svcs, pods, "cluster.local"), n, m, "cluster.local"); err != nil {
		t.Fatalf("the scratch outputs fail Verify: %v", err)
	}
}

func TestFreshIP(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		ip := FreshIP()
		if seen[ip] || strings.HasPrefix(ip, "10.") {
			t.Fatalf("FreshIP returned %s twice or in 10/8", ip)
		}
		seen[ip] = true
	}
}

func TestPlanChanges(t *testing.T) {
	const n = 12
	perm := []int{25, 3, 7}
	plan := PlanChanges(perm, 7, n)
	if len(plan) != 7 {
		t.Fatalf("planned %d changes, want 7", len(plan))
	}
	ips := map[string]bool{}
	for i, ch := range plan {
		if want := perm[i%len(perm)]; ch.Pod != want || ch.Key != PodKey(want, n) {
			t.Errorf("change %d is of pod %d (%s), want %d (%s)", i, ch.Pod, ch.Key, want, PodKey(want, n))
		}
		if ips[ch.IP] || strings.HasPrefix(ch.IP, "10.") {
			t.Errorf("change %d gives %s, not a fresh IP", i, ch.IP)
		}
		ips[ch.IP] = true
	}
	if got := PlanChanges(perm, 0, n); len(got) != 0 {
		t.Errorf("a plan of no changes has %d", len(got))
	}
}

func TestSelects(t *testing.T) {
	tests := []struct {
		name             string
		selector, labels map[string]string
		want             bool
	}{
		{"match", map[string]string{"app": "a"}, map[string]string{"app": "a", "v": "1"}, true},
		{"other value", map[string]string{"app": "a"}, map[string]string{"app": "b"}, false},
		{"missing key", map[string]string{"app": "a", "v": "1"}, map[string]string{"app": "a"}, false},
		{"empty selector selects nothing", nil, map[string]string{"app": "a"}, false},
	}
	for _, tc := range tests {
		if got := Selects(tc.selector, tc.labels); got != tc.want {
			t.Errorf("%s: Selects = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestVerifyFinds breaks one output at a time and expects Verify to name it.
func TestVerifyFinds(t *testing.T) {
	const n, m = 5, 20
	good := func() Snapshot { return scratch(Services(n), Pods(n, m), "cluster.local") }
	tests := []struct {
		name   string
		mangle func(*Snapshot)
		want   string
	}{
		{"pod missing", func(s *Snapshot) { s.Pods = s.Pods[1:] }, "pods: have 19"},
		{"workload missing", func(s *Snapshot) { s.Workloads = s.Workloads[1:] }, "workloads: have 19"},
		{"endpoints missing", func(s *Snapshot) { s.Endpoints = s.Endpoints[1:] }, "endpoints: have 4"},
		{"stale workload ip", func(s *Snapshot) { s.Workloads[3].IP = "1.2.3.4" }, "workload ns-3/pod-3: ip"},
		{"wrong services", func(s *Snapshot) { s.Workloads[3].Services = nil }, "workload ns-3/pod-3: services"},
		{"wrong trust domain", func(s *Snapshot) { s.Workloads[3].TrustDomain = "x" }, "trust domain"},
		{"orphan workload", func(s *Snapshot) { s.Workloads[3].Name = "ghost" }, "has no pod"},
		{"stale endpoints", func(s *Snapshot) { s.Endpoints[2].IPs = slices.Clone(s.Endpoints[2].IPs[1:]) }, "endpoints ns-2/svc-2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.mangle(&s)
			err := Verify(s, n, m, "cluster.local")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestVerifyEventually(t *testing.T) {
	const n, m = 3, 6
	good := scratch(Services(n), Pods(n, m), "cluster.local")
	reads := 0
	retries, err := VerifyEventually(func() Snapshot {
		if reads++; reads < 3 {
			return Snapshot{}
		}
		return good
	}, n, m, "cluster.local", 10*time.Second)
	if err != nil || retries != 2 {
		t.Errorf("VerifyEventually = %d, %v; want 2 retries, no error", retries, err)
	}
	if _, err := VerifyEventually(func() Snapshot { return Snapshot{} }, n, m, "cluster.local", 0); err == nil {
		t.Error("VerifyEventually passed outputs that never verify")
	}
}
