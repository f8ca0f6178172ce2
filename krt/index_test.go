package krt_test

import (
	"slices"
	"testing"

	"github.com/meshd/meshd/krt"
)

func TestIndexNameAndKeys(t *testing.T) {
	_, pods := newStatic[Pod]()
	pods.Set(Pod{Name: "a", Namespace: "x", IP: "10.0.0.1"})
	byIP := krt.NewIndex(pods, "by-ip", func(p Pod) []string { return []string{p.IP} })
	if byIP.Name() != "by-ip" {
		t.Fatalf("name %q", byIP.Name())
	}
	pods.Set(Pod{Name: "b", Namespace: "x", IP: "10.0.0.2"}, Pod{Name: "c", Namespace: "y", IP: "10.0.0.2"})
	keys := byIP.Keys()
	slices.Sort(keys)
	if want := []string{"10.0.0.1", "10.0.0.2"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v (built from existing items, then maintained)", keys, want)
	}
	pods.Delete("x/a")
	if keys := byIP.Keys(); !slices.Equal(keys, []string{"10.0.0.2"}) {
		t.Fatalf("keys after the last item of 10.0.0.1 left: %v", keys)
	}
	if got := byIP.Lookup("10.0.0.1"); len(got) != 0 {
		t.Fatalf("lookup of an emptied key: %v", got)
	}
}
