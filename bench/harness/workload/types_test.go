package workload

import (
	"maps"
	"testing"
	"time"
)

// TestAccessors checks the methods the engines' filters and indexes call.
// bench/krt's TestEquals changes each field of each type in turn, by
// reflection, against Equals.
func TestAccessors(t *testing.T) {
	s, p := Services(3)[2], Pods(3, 6)[5]
	w := Workload{Name: p.Name, Namespace: p.Namespace}
	if s.GetNamespace() != "ns-2" || p.GetNamespace() != "ns-2" || w.GetNamespace() != "ns-2" {
		t.Errorf("namespaces %s, %s, %s; want ns-2", s.GetNamespace(), p.GetNamespace(), w.GetNamespace())
	}
	if !maps.Equal(s.GetSelector(), s.GetLabelSelector()) || s.GetSelector()["app"] != "svc-2" {
		t.Errorf("selectors %v, %v; want app=svc-2", s.GetSelector(), s.GetLabelSelector())
	}
	if p.GetLabels()["app"] != "svc-2" {
		t.Errorf("pod labels %v, want app=svc-2", p.GetLabels())
	}
	if (MeshConfig{}).ResourceName() != "mesh" || (Endpoints{Service: "ns-2/svc-2"}).ResourceName() != "ns-2/svc-2" {
		t.Error("singleton or endpoints key wrong")
	}
}

func TestEquals(t *testing.T) {
	s, p := Services(1)[0], Pods(1, 1)[0]
	s2, p2 := Services(2)[1], Pods(2, 2)[1]
	w := Workload{Name: "a", Services: []string{"x"}}
	e := Endpoints{Service: "x", IPs: []string{"1"}}
	tests := []struct {
		name      string
		same, not bool
	}{
		{"Service", s.Equals(Services(1)[0]), s.Equals(s2)},
		{"Pod", p.Equals(Pods(1, 1)[0]), p.Equals(p2)},
		{"Workload", w.Equals(Workload{Name: "a", Services: []string{"x"}}), w.Equals(Workload{Name: "a", Services: []string{"y"}})},
		{"Endpoints", e.Equals(Endpoints{Service: "x", IPs: []string{"1"}}), e.Equals(Endpoints{Service: "x"})},
	}
	for _, tc := range tests {
		if !tc.same || tc.not {
			t.Errorf("%s: Equals of a copy %v (want true), of another %v (want false)", tc.name, tc.same, tc.not)
		}
	}
}

func TestAwait(t *testing.T) {
	tr := NewTracker()
	if err := tr.Await(tr.Arm(), time.Second); err != nil {
		t.Fatalf("Await with nothing pending: %v", err)
	}
	tr.Expect("a", "")
	if err := tr.Await(tr.Arm(), 10*time.Millisecond); err == nil {
		t.Fatal("Await returned nil while an IP was pending")
	}
}
