package main

import (
	"testing"

	"github.com/meshd/meshd/bench/harness/workload"

	"github.com/meshd/meshd/internal/equalstest"
)

// TestEquals changes each field of each item type in turn and expects
// Equals to see it: a missed field would let the early cutoff drop a
// change, and the benchmark would measure less work than the anchor's.
func TestEquals(t *testing.T) {
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"Service", func(t *testing.T) {
			equalstest.Check(t, workload.Service{Name: "svc-0", Namespace: "ns-0", Selector: map[string]string{"app": "svc-0"}})
		}},
		{"Pod", func(t *testing.T) {
			equalstest.Check(t, workload.Pod{Name: "pod-0", Namespace: "ns-0", Labels: map[string]string{"app": "svc-0"}, IP: "10.0.0.0"})
		}},
		{"Workload", func(t *testing.T) {
			equalstest.Check(t, workload.Workload{Name: "pod-0", Namespace: "ns-0", IP: "10.0.0.0",
				Services: []string{"ns-0/svc-0"}, TrustDomain: "cluster.local"})
		}},
		{"Endpoints", func(t *testing.T) {
			equalstest.Check(t, workload.Endpoints{Service: "ns-0/svc-0", IPs: []string{"10.0.0.0"}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}
