package workload

import (
	"slices"
	"testing"
)

func TestDerive(t *testing.T) {
	p := Pod{Name: "pod-1", Namespace: "ns-1", IP: "10.0.0.1", Labels: map[string]string{"app": "a"}}
	svcs := []Service{{Name: "b", Namespace: "ns-1"}, {Name: "a", Namespace: "ns-1"}}
	w := Derive(p, svcs, "td")
	want := Workload{Name: "pod-1", Namespace: "ns-1", IP: "10.0.0.1", Services: []string{"ns-1/a", "ns-1/b"}, TrustDomain: "td"}
	if !w.Equals(want) {
		t.Errorf("Derive = %+v, want %+v", w, want)
	}
	ep := EndpointsOf(svcs[1], []Workload{{IP: "10.0.0.9"}, {IP: "10.0.0.1"}})
	if want := (Endpoints{Service: "ns-1/a", IPs: []string{"10.0.0.1", "10.0.0.9"}}); !ep.Equals(want) {
		t.Errorf("EndpointsOf = %+v, want %+v", ep, want)
	}
}

func TestDedupe(t *testing.T) {
	a, b := Services(2)[0], Services(2)[1]
	got := Dedupe([]Service{b, a, b, a})
	if !slices.EqualFunc(got, []Service{a, b}, Service.Equals) {
		t.Errorf("Dedupe = %v, want [%v %v]", got, a, b)
	}
}

func TestSelectorPairs(t *testing.T) {
	s := Service{Name: "s", Namespace: "ns", Selector: map[string]string{"app": "x", "v": "1"}}
	got := SelectorPairs(s)
	slices.Sort(got)
	if want := []string{"ns/app=x", "ns/v=1"}; !slices.Equal(got, want) {
		t.Errorf("SelectorPairs = %v, want %v", got, want)
	}
	if PairKey("ns", "app", "x") != got[0] {
		t.Errorf("PairKey does not build SelectorPairs' key")
	}
}
