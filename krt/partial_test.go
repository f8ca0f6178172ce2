package krt_test

import (
	"strings"
	"testing"

	"github.com/meshd/meshd/krt"
)

func TestPartialFetchRecomputesOnlyOnProjectionChange(t *testing.T) {
	g, pods := newStatic[Pod]()
	services := krt.NewStatic[Service](g)
	services.Set(Service{Name: "web", Namespace: "a"})
	ips := krt.NewCollection(g, services, func(ctx krt.HandlerContext, s Service) *Endpoints {
		got := krt.PartialFetch(ctx, pods, func(p Pod) string { return p.IP }, krt.FilterNamespace(s.Namespace), krt.FilterFunc(func(p Pod) bool { return p.Labels["ready"] != "no" }))
		return &Endpoints{Service: s.ResourceName(), IPs: got}
	}, krt.WithName("ips"))
	web := func(ip string, labels map[string]string) Pod {
		return Pod{Name: "p", Namespace: "a", IP: ip, Labels: labels}
	}
	steps := []struct {
		name      string
		write     func()
		recompute bool
		want      string
	}{
		{"pod added", func() { pods.Set(web("10.0.0.1", nil)) }, true, "10.0.0.1"},
		{"labels changed", func() { pods.Set(web("10.0.0.1", map[string]string{"v": "2"})) }, false, "10.0.0.1"},
		{"IP changed", func() { pods.Set(web("10.0.0.2", map[string]string{"v": "2"})) }, true, "10.0.0.2"},
		{"pod elsewhere", func() { pods.Set(Pod{Name: "q", Namespace: "b", IP: "10.0.0.9"}) }, false, "10.0.0.2"},
		{"second pod, same IP", func() { pods.Set(Pod{Name: "r", Namespace: "a", IP: "10.0.0.2"}) }, true, "10.0.0.2,10.0.0.2"},
		{"pod left the filter", func() {
			pods.Set(Pod{Name: "r", Namespace: "a", IP: "10.0.0.2", Labels: map[string]string{"ready": "no"}})
		}, true, "10.0.0.2"},
		{"pod deleted", func() { pods.Delete("a/p") }, true, ""},
	}
	for _, st := range steps {
		before := info(t, g, "ips").Recomputes
		st.write()
		if got := info(t, g, "ips").Recomputes - before; (got > 0) != st.recompute {
			t.Fatalf("%s: %d recomputes, want recompute=%v", st.name, got, st.recompute)
		}
		e, _ := ips.Get("a/web")
		if got := strings.Join(e.IPs, ","); got != st.want {
			t.Fatalf("%s: IPs %q, want %q", st.name, got, st.want)
		}
	}
	exp, _ := g.Explain("ips", "a/web")
	if len(exp.Reads) != 1 || !strings.Contains(exp.Reads[0].Filter, "projected") {
		t.Fatalf("explain reads %+v", exp.Reads)
	}
}
