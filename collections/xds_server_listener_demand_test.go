package collections

import (
	"testing"

	securityv1beta1 "istio.io/api/security/v1beta1"

	"github.com/meshd/meshd/krt"
)

// TestDemandedServerListeners builds the model twice over the same
// objects, once with every server listener and once with those of the
// names demanded only: a demanded name's listener has the bytes of the
// eager one, through a policy change too; names that are no server
// listener, or of an address or port no workload serves, have none; and
// a name no longer demanded loses its listener.
func TestDemandedServerListeners(t *testing.T) {
	eager := newSecurityModel()
	g, in, _ := newTestModel()
	demand := krt.NewStatic[string](g, krt.WithKey(func(n string) string { return n }))
	m := Build(g, in.Inputs(), WithServerListenerDemand(demand))
	populate(eager.in, "ns", 5, 2)
	populate(in, "ns", 5, 2)
	want := []string{ServerListenerName("10.0.1.1", 9090), ServerListenerName("10.0.3.2", 8080)}
	demand.Set(append([]string{ServerListenerName("10.0.1.1", 7000), ServerListenerName("10.9.9.9", 9090),
		"10.0.1.1:9090", ServerListenerNamePrefix + "10.0.1.1:09090"}, want...)...)
	check := func(what string) {
		t.Helper()
		if n := m.ServerListeners.Len(); n != len(want) {
			t.Errorf("%s: %d server listeners, want %d", what, n, len(want))
		}
		for _, name := range want {
			got, ok := m.ServerListeners.Get(name)
			exp, _ := eager.m.ServerListeners.Get(name)
			if !ok || !got.Equals(exp) {
				t.Errorf("%s: listener %s (found %v) differs from the eager model's", what, name, ok)
			}
		}
	}
	check("demanded")
	deny := authzPolicy("ns", "deny", "svc-1", securityv1beta1.AuthorizationPolicy_DENY, fromPrincipals("cluster.local/ns/x/sa/y"))
	eager.in.Set(deny)
	in.Set(deny)
	check("after a policy change")
	if l, _ := m.ServerListeners.Get(want[0]); listenerSummary(t, l.Message()) != "plain DENY[ns/deny/rules[0]]" {
		t.Errorf("svc-1 listener: %s", listenerSummary(t, l.Message()))
	}
	demand.Delete(want[1])
	want = want[:1]
	check("after a name left the demand")
}
