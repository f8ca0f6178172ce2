package collections

import (
	"maps"
	"slices"
	"strings"
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
		in.Set(s)
	}
	in.Set(pod("a", "web-0", "10.0.0.1", sel, true))

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

// TestNamespaceViews: with WithNamespaceViews, a port's sidecar listener
// and route configuration come in one plain variant (the services exported
// to all, hidden from the namespaces with a view) and one per namespace a
// narrower exportTo names (its services too, visible to it alone); views
// follow exportTo changes and vanish with the last narrow service.
func TestNamespaceViews(t *testing.T) {
	_, in, m := newTestModel(WithNamespaceViews(true))
	set := func(ns, name, exportTo string) {
		s := service(ns, name, map[string]string{"app": name}, svcPort("http", 80, 8080))
		if exportTo != "" {
			s.Annotations = map[string]string{AnnotationExportTo: exportTo}
		}
		in.Set(s)
	}
	set("a", "web", ".")
	set("b", "api", "")
	set("c", "db", "a,d")

	web, api, db := "web.a.svc.cluster.local:80", "api.b.svc.cluster.local:80", "db.c.svc.cluster.local:80"
	checkNamespaceViews(t, m, "three services", map[string]namespaceView{
		"80":   {[]string{api}, nil, []string{"a", "d"}},
		"80~a": {sorted(api, db, web), []string{"a"}, nil},
		"80~d": {sorted(api, db), []string{"d"}, nil},
	})
	set("a", "web", "*")
	checkNamespaceViews(t, m, "web exported to all", map[string]namespaceView{
		"80":   {sorted(api, web), nil, []string{"a", "d"}},
		"80~a": {sorted(api, db, web), []string{"a"}, nil},
		"80~d": {sorted(api, db, web), []string{"d"}, nil},
	})
	set("c", "db", "")
	checkNamespaceViews(t, m, "none narrow", map[string]namespaceView{
		"80": {sorted(api, db, web), nil, nil},
	})
}

// namespaceView is one variant of a port's sidecar route configuration.
type namespaceView struct {
	hosts                 []string // virtual host names, sorted
	visibleTo, hiddenFrom []string
}

// checkNamespaceViews checks that the sidecar routes are exactly want, by
// name, and that each has its listener, alike in visibility, naming it.
func checkNamespaceViews(t *testing.T, m *Model, step string, want map[string]namespaceView) {
	t.Helper()
	validateModel(t, m)
	got := map[string]namespaceView{}
	for _, r := range m.SidecarRouteConfigurations.List() {
		var hosts []string
		for _, vh := range r.Message().VirtualHosts {
			hosts = append(hosts, vh.Name)
		}
		slices.Sort(hosts)
		got[r.Name] = namespaceView{hosts, r.VisibleTo, r.HiddenFrom}
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok || !slices.Equal(g.hosts, w.hosts) || !slices.Equal(g.visibleTo, w.visibleTo) || !slices.Equal(g.hiddenFrom, w.hiddenFrom) {
			t.Errorf("%s: route %s = %+v (present %v), want %+v", step, name, g, ok, w)
		}
		l, ok := m.Listeners.Get(SidecarListenerName(80) + name[len("80"):])
		if !ok || !slices.Equal(l.VisibleTo, w.visibleTo) || !slices.Equal(l.HiddenFrom, w.hiddenFrom) {
			t.Errorf("%s: listener for %s: %+v (present %v)", step, name, l, ok)
		} else if !strings.Contains(l.Message().String(), `route_config_name:"`+name+`"`) {
			t.Errorf("%s: listener %s does not name route %s: %v", step, l.Name, name, l.Message())
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: routes %v, want %d", step, slices.Sorted(maps.Keys(got)), len(want))
	}
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}
