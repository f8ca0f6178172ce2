package envoysim

import (
	"slices"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The core is stepped here with no stream: responses in, requests and
// violations out.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func cluster(name string, connectSeconds int64) *clusterv3.Cluster {
	return &clusterv3.Cluster{Name: name, ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig: &clusterv3.Cluster_EdsClusterConfig{EdsConfig: &corev3.ConfigSource{
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}},
		ConnectTimeout: durationpb.New(time.Duration(connectSeconds) * time.Second)}
}

func assignment(name string) *endpointv3.ClusterLoadAssignment {
	return &endpointv3.ClusterLoadAssignment{ClusterName: name}
}

// resp builds a response of typeURL numbered nonce, carrying msgs (on
// Delta, each at version "v1").
func resp(typeURL, nonce string, delta bool, msgs ...proto.Message) *response {
	r := &response{typeURL: typeURL, version: "v" + nonce, nonce: nonce}
	for _, m := range msgs {
		a, err := anypb.New(m)
		if err != nil {
			panic(err)
		}
		wr := wireResource{any: a}
		if delta {
			wr.name, wr.version = resourceName(m), "v1"
		}
		r.resources = append(r.resources, wr)
	}
	return r
}

func rules(vs []Violation) []Rule {
	var out []Rule
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

// TestCoreWarming: an updated cluster warms until its load assignment
// comes again, unchanged, and the listeners are asked for only once the
// first clusters are warm.
func TestCoreWarming(t *testing.T) {
	c := newCore(false, &options{warmingLimit: 10 * time.Second})
	c.start()
	reqs := c.handle(resp(ClusterType, "1", false, cluster("a", 1)), t0)
	if len(reqs) != 2 || reqs[0].typeURL != EndpointType || !slices.Equal(reqs[0].names, []string{"a"}) || !reqs[1].answer {
		t.Fatalf("after CDS: %+v, want an EDS request for a, then the CDS ACK", reqs)
	}
	reqs = c.handle(resp(EndpointType, "2", false, assignment("a")), t0)
	if len(reqs) != 2 || reqs[0].typeURL != ListenerType || reqs[0].answer {
		t.Fatalf("after EDS: %+v, want the first LDS request, then the EDS ACK", reqs)
	}
	c.handle(resp(ClusterType, "3", false, cluster("a", 2)), t0)
	if c.cfg.WarmingClusters["a"] == nil || c.cfg.Clusters["a"].GetConnectTimeout().GetSeconds() != 1 {
		t.Fatalf("updated a: %v, want it warming and the old one serving", c.cfg)
	}
	if c.check(t0.Add(11 * time.Second)); !slices.Equal(rules(c.takeViolations()), []Rule{RuleWarmingOverdue}) {
		t.Fatal("a warming past the limit: no violation")
	}
	c.handle(resp(EndpointType, "4", false, assignment("a")), t0)
	if !c.cfg.Warm() || c.cfg.Clusters["a"].GetConnectTimeout().GetSeconds() != 2 || c.stats.Unchanged[EndpointType] != 1 {
		t.Fatalf("after a's load assignment again: %v, unchanged %v", c.cfg, c.stats.Unchanged)
	}
	if v := c.takeViolations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

// TestCoreUnrequested: a load assignment the proxy never asked for is a
// violation; one it just dropped is ignored until a response shows the
// server read the drop, and a violation after.
func TestCoreUnrequested(t *testing.T) {
	c := newCore(true, &options{warmingLimit: time.Minute})
	c.start()
	c.handle(resp(ClusterType, "1", true, cluster("a", 1), cluster("b", 1)), t0)
	c.handle(resp(EndpointType, "2", true, assignment("z")), t0)
	if got := rules(c.takeViolations()); !slices.Equal(got, []Rule{RuleUnrequested}) {
		t.Fatalf("z never asked for: %v", got)
	}
	// b goes and c comes in one CDS response: the proxy drops b's load
	// assignment and asks for c's.
	c.handle(&response{typeURL: ClusterType, nonce: "3", removed: []string{"b"}, resources: resp(ClusterType, "", true, cluster("c", 1)).resources}, t0)
	c.handle(resp(EndpointType, "4", true, assignment("b")), t0)
	if v := c.takeViolations(); len(v) != 0 || c.cfg.Endpoints["b"] != nil {
		t.Fatalf("b in flight: violations %v, held %v", v, c.cfg.Endpoints["b"])
	}
	c.handle(resp(EndpointType, "5", true, assignment("c")), t0) // the server read the drop
	c.handle(resp(EndpointType, "6", true, assignment("b")), t0)
	if got := rules(c.takeViolations()); !slices.Equal(got, []Rule{RuleUnrequested}) {
		t.Fatalf("b after the server read its drop: %v", got)
	}
}

// TestCoreNack: a response Envoy rejects is NACKed with the version held,
// and changes nothing.
func TestCoreNack(t *testing.T) {
	c := newCore(false, &options{warmingLimit: time.Minute, allowNacks: true})
	c.start()
	c.handle(resp(ClusterType, "1", false, cluster("a", 1)), t0)
	for _, r := range []*response{
		resp(ClusterType, "2", false, cluster("a", 2), cluster("a", 3)),
		resp(ClusterType, "3", false, cluster("b", -1)),
		resp(ClusterType, "4", false, assignment("a")),
	} {
		reqs := c.handle(r, t0)
		if len(reqs) != 1 || reqs[0].nack == "" || reqs[0].version != "v1" || reqs[0].nonce != r.nonce {
			t.Errorf("response %s: %+v, want a NACK naming v1", r.nonce, reqs)
		}
	}
	if a := c.cfg.WarmingClusters["a"]; a == nil || a.Resource.GetConnectTimeout().GetSeconds() != 1 || c.cfg.WarmingClusters["b"] != nil || c.stats.Nacks[ClusterType] != 3 {
		t.Fatalf("after NACKs: %v, nacks %v", c.cfg, c.stats.Nacks)
	}
}

// TestCoreDeltaChecks: a Delta resource needs a version, and may not be
// both sent and removed.
func TestCoreDeltaChecks(t *testing.T) {
	c := newCore(true, &options{warmingLimit: time.Minute})
	c.start()
	r := resp(ClusterType, "1", true, cluster("a", 1))
	r.resources[0].version = ""
	r.removed = []string{"a"}
	c.handle(r, t0)
	if got := rules(c.takeViolations()); !slices.Equal(got, []Rule{RuleNoVersion, RuleSentAndRemoved}) {
		t.Fatalf("violations: %v", got)
	}
}

// TestCoreOnDemand: on Delta, a name subscribed beside the wildcard is
// asked for alone; dropped, it stays until the server says whether the
// wildcard holds it (a violation past the limit); dropping the wildcard
// forgets what only it held.
func TestCoreOnDemand(t *testing.T) {
	c := newCore(true, &options{warmingLimit: time.Minute})
	c.start()
	c.handle(resp(ClusterType, "1", true, cluster("a", 1)), t0)
	reqs := c.subscribe(ClusterType, []string{"od"})
	if len(reqs) != 1 || !slices.Equal(reqs[0].subscribe, []string{"od"}) || !slices.Equal(reqs[0].names, []string{"*", "od"}) {
		t.Fatalf("subscribe od: %+v, want od subscribed beside the wildcard", reqs)
	}
	c.handle(resp(ClusterType, "2", true, cluster("od", 1)), t0)
	reqs = c.unsubscribe(ClusterType, []string{"od"}, t0)
	if len(reqs) != 1 || !slices.Equal(reqs[0].unsubscribe, []string{"od"}) || c.cfg.WarmingClusters["od"] == nil {
		t.Fatalf("unsubscribe od: %+v, %v: want od dropped and still held", reqs, c.cfg)
	}
	// a and od, which got no load assignment, are overdue too.
	if c.check(t0.Add(2 * time.Minute)); !slices.Contains(rules(c.takeViolations()), RuleWildcardOverlap) {
		t.Fatal("od never settled: no violation")
	}
	c.handle(&response{typeURL: ClusterType, nonce: "3", removed: []string{"od"}}, t0)
	if c.cfg.WarmingClusters["od"] != nil || len(c.overlap) != 0 {
		t.Fatalf("od named removed: %v, overlap %v", c.cfg, c.overlap)
	}
	c.subscribe(ClusterType, []string{"b"})
	reqs = c.unsubscribe(ClusterType, []string{"*"}, t0)
	if !slices.Equal(reqs[0].unsubscribe, []string{"*"}) || c.cfg.WarmingClusters["a"] != nil || !slices.Equal(reqs[1].unsubscribe, []string{"a"}) {
		t.Fatalf("unsubscribe *: %+v, %v: want a forgotten and its load assignment dropped", reqs, c.cfg)
	}
	if v := c.takeViolations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}
