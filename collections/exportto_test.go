package collections

import (
	"slices"
	"testing"
)

func TestParseExportTo(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"", nil},
		{"*", nil},
		{" * ", nil},
		{".", []string{"own"}},
		{"b,a", []string{"a", "b"}},
		{" a , ., a ", []string{"a", "own"}},
		{"a,*", nil},
		{" , ", nil},
		{"~", []string{"~"}},
	}
	for _, tt := range tests {
		if got := ParseExportTo(tt.value, "own"); !slices.Equal(got, tt.want) {
			t.Errorf("ParseExportTo(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// TestExportToVisibility checks that a service's exportTo reaches the
// resources of that service, follows the annotation's changes, and leaves
// the aggregate sidecar resources visible to all.
func TestExportToVisibility(t *testing.T) {
	_, in, m := newTestModel()
	sel := map[string]string{"app": "web"}
	web := func(exportTo string) {
		s := service("a", "web", sel, svcPort("http", 80, 8080), svcPort("tcp", 5432, 5432))
		if exportTo != "" {
			s.Annotations = map[string]string{AnnotationExportTo: exportTo}
		}
		in.services.Set(s)
	}
	in.pods.Set(pod("a", "web-0", "10.0.0.1", sel, true))

	check := func(step string, want []string) {
		t.Helper()
		for _, name := range []string{"outbound|80||web.a.svc.cluster.local", "outbound|5432||web.a.svc.cluster.local"} {
			if c, ok := m.Clusters.Get(name); !ok || !slices.Equal(c.VisibleTo, want) {
				t.Errorf("%s: cluster %s visible to %q (present %v), want %q", step, name, c.VisibleTo, ok, want)
			}
			if c, ok := m.ClusterLoadAssignments.Get(name); !ok || !slices.Equal(c.VisibleTo, want) {
				t.Errorf("%s: CLA %s visible to %q (present %v), want %q", step, name, c.VisibleTo, ok, want)
			}
		}
		for _, name := range []string{"web.a.svc.cluster.local:80", "web.a.svc.cluster.local:5432"} {
			if l, ok := m.Listeners.Get(name); !ok || !slices.Equal(l.VisibleTo, want) {
				t.Errorf("%s: listener %s visible to %q (present %v), want %q", step, name, l.VisibleTo, ok, want)
			}
			if r, ok := m.RouteConfigurations.Get(name); !ok || !slices.Equal(r.VisibleTo, want) {
				t.Errorf("%s: route %s visible to %q (present %v), want %q", step, name, r.VisibleTo, ok, want)
			}
		}
		if l, ok := m.Listeners.Get("10.96.0.1_5432"); !ok || !slices.Equal(l.VisibleTo, want) {
			t.Errorf("%s: sidecar TCP listener visible to %q (present %v), want %q", step, l.VisibleTo, ok, want)
		}
		// Aggregates of every service on the port stay visible to all.
		if l, ok := m.Listeners.Get(SidecarListenerName(80)); !ok || l.VisibleTo != nil {
			t.Errorf("%s: sidecar listener visible to %q (present %v), want all", step, l.VisibleTo, ok)
		}
		if r, ok := m.RouteConfigurations.Get("80"); !ok || r.VisibleTo != nil {
			t.Errorf("%s: sidecar route visible to %q (present %v), want all", step, r.VisibleTo, ok)
		}
	}

	web("")
	check("no annotation", nil)
	web(".")
	check("own namespace", []string{"a"})
	web("c, .")
	check("listed", []string{"a", "c"})
	web("*")
	check("all again", nil)
}
