package krt_test

import (
	"testing"

	"github.com/meshd/meshd/internal/equalstest"
)

// TestBenchEquals changes each field of each benchmark item type in turn
// and expects Equals to see it: a missed field would let the early cutoff
// drop changes, and the benchmarks would measure less work than they claim.
// (equalstest imports only the standard library, so krt's own imports stay
// the standard library's.)
func TestBenchEquals(t *testing.T) {
	labels := map[string]string{"group": "g0"}
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"benchItem", func(t *testing.T) {
			equalstest.Check(t, benchItem{Name: "i0", Namespace: "ns0", Labels: labels, Selector: labels, Value: 1})
		}},
		{"benchPod", func(t *testing.T) {
			equalstest.Check(t, benchPod{Name: "pod-0", Namespace: "ns-0", IP: "10.0.0.0", Labels: labels})
		}},
		{"benchService", func(t *testing.T) {
			equalstest.Check(t, benchService{Name: "svc-0", Namespace: "ns-0", Selector: labels})
		}},
		{"benchWorkload", func(t *testing.T) {
			equalstest.Check(t, benchWorkload{Key: "ns-0/pod-0", IP: "10.0.0.0", Services: []string{"ns-0/svc-0"}})
		}},
		{"benchEndpoints", func(t *testing.T) {
			equalstest.Check(t, benchEndpoints{Service: "ns-0/svc-0", IPs: []string{"10.0.0.0"}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}
