package envoysim

import (
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/xds/xdstest"
)

// Envoy is one proxy on one ADS stream at a time. It is driven by the
// test goroutine: it reads responses, and answers them, only inside
// Await (and the calls built on it), so what it holds changes only
// there. Its stream closes when the test ends.
type Envoy struct {
	t    testing.TB
	opts options
	core *core
	w    wire
	node *corev3.Node
}

// Option configures an Envoy.
type Option func(*options)

type options struct {
	warmingLimit time.Duration
	timeout      time.Duration
	allowNacks   bool
	strictRoutes bool
	onViolation  func(Violation)
}

// WithWarmingLimit sets how long an updated cluster or listener may warm
// before RuleWarmingOverdue is reported. Envoy itself waits without end;
// the limit stands for "never". Default: 20s.
func WithWarmingLimit(d time.Duration) Option { return func(o *options) { o.warmingLimit = d } }

// AllowNacks lets the proxy reject responses without reporting RuleNack,
// for tests that serve it something invalid; Stats counts the NACKs.
// Default: a NACK is a violation.
func AllowNacks() Option { return func(o *options) { o.allowNacks = true } }

// WarmListenersOnRoutes makes an updated listener warm until every route
// configuration it names arrives again, as if Envoy did not reuse the
// ones it holds. Envoy's protocol documentation says it reuses them; the
// option checks a server that resends them anyway. Default: an updated
// listener warms only on the route configurations it does not hold.
func WarmListenersOnRoutes() Option { return func(o *options) { o.strictRoutes = true } }

// OnViolation sets what a violation does. Default: fail the test
// (t.Errorf), naming the proxy.
func OnViolation(f func(Violation)) Option { return func(o *options) { o.onViolation = f } }

// Node returns a node as Envoy names itself: the id, user_agent_name
// "envoy" and a build version.
func Node(id string) *corev3.Node {
	return &corev3.Node{Id: id, Cluster: "envoysim", UserAgentName: "envoy",
		UserAgentVersionType: &corev3.Node_UserAgentBuildVersion{UserAgentBuildVersion: &corev3.BuildVersion{
			Version: &typev3.SemanticVersion{MajorNumber: 1, MinorNumber: 36}}},
		ClientFeatures: []string{"envoy.lb.does_not_support_overprovisioning", "envoy.lrs.supports_send_all_clusters"}}
}

// Protocol is an ADS protocol variant.
type Protocol int

const (
	// SotW is the State-of-the-World protocol (StreamAggregatedResources).
	SotW Protocol = iota
	// Delta is the incremental protocol (DeltaAggregatedResources).
	Delta
)

func (p Protocol) String() string {
	if p == Delta {
		return "delta"
	}
	return "sotw"
}

// New starts a proxy on an ADS stream of protocol p on cc: it sends its
// first request, for every cluster. node, as Node returns, goes with it.
func New(t testing.TB, p Protocol, cc grpc.ClientConnInterface, node *corev3.Node, opts ...Option) *Envoy {
	t.Helper()
	e := &Envoy{t: t, node: node, opts: options{warmingLimit: 20 * time.Second, timeout: 30 * time.Second}}
	for _, o := range opts {
		o(&e.opts)
	}
	if e.opts.onViolation == nil {
		e.opts.onViolation = func(v Violation) {
			t.Helper()
			t.Errorf("envoysim %s: %v", node.GetId(), v)
		}
	}
	e.core = newCore(p == Delta, &e.opts)
	e.w = openWire(t, p == Delta, cc, node)
	e.sendAll(e.core.start())
	return e
}

// openWire opens a stream of the protocol on cc; node goes with its
// first request.
func openWire(t testing.TB, delta bool, cc grpc.ClientConnInterface, node *corev3.Node) wire {
	t.Helper()
	if delta {
		return &stream[discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse]{
			s: xdstest.NewDelta(t, cc, node), to: deltaRequest, from: deltaResponse}
	}
	return &stream[discovery.DiscoveryRequest, discovery.DiscoveryResponse]{
		s: xdstest.NewSotW(t, cc, node), to: sotwRequest, from: sotwResponse}
}

func (e *Envoy) sendAll(reqs []request) {
	e.t.Helper()
	for _, r := range reqs {
		e.w.send(r)
	}
}

// Config returns what the proxy holds. It changes only inside Await and
// the calls built on it.
func (e *Envoy) Config() *Config { return e.core.cfg }

// Stats returns a copy of what the proxy counted.
func (e *Envoy) Stats() Stats { return e.core.stats.clone() }

// Await reads and answers responses until cond holds for the proxy's
// configuration, reporting every violation as it is found; it fails the
// test if the stream ends or cond does not hold within 30s. cond is
// checked after every response and at least every pollEvery, so it may
// also read what the proxy does not hold, such as the server's registry.
func (e *Envoy) Await(what string, cond func(*Config) bool) {
	e.t.Helper()
	e.await(what, func() bool { return cond(e.core.cfg) })
}

// pollEvery is how often Await checks its condition when no response
// comes.
const pollEvery = 20 * time.Millisecond

func (e *Envoy) await(what string, cond func() bool) {
	e.t.Helper()
	end := time.Now().Add(e.opts.timeout)
	for {
		e.report()
		if cond() {
			return
		}
		wait := time.Until(end)
		if wait <= 0 {
			e.t.Fatalf("envoysim %s: %s: not within %v; holds %v", e.node.GetId(), what, e.opts.timeout, e.core.cfg)
		}
		if d, ok := e.core.deadline(); ok && time.Until(d) < wait {
			wait = max(time.Until(d), 0) + time.Millisecond
		}
		wait = min(wait, pollEvery)
		timer := time.NewTimer(wait)
		r, err, ok := e.w.next(timer.C)
		timer.Stop()
		now := time.Now()
		e.core.check(now)
		if !ok {
			continue
		}
		if r == nil {
			e.report()
			e.t.Fatalf("envoysim %s: %s: ADS stream ended: %v", e.node.GetId(), what, err)
		}
		e.sendAll(e.core.handle(r, now))
	}
}

// Settle awaits a proxy with nothing warming and, on Delta, every name
// dropped beside a wildcard answered (RuleWildcardOverlap).
func (e *Envoy) Settle() {
	e.t.Helper()
	e.await("nothing warming", func() bool { return e.core.cfg.Warm() && len(e.core.overlap) == 0 })
}

func (e *Envoy) report() {
	e.t.Helper()
	for _, v := range e.core.takeViolations() {
		e.opts.onViolation(v)
	}
}

// Subscribe asks for names of ListenerType or ClusterType beside what
// the proxy asks for already ("*": the wildcard), as Envoy's on-demand
// discovery does beside its wildcard; Await then reads the answer.
func (e *Envoy) Subscribe(typeURL string, names ...string) {
	e.t.Helper()
	e.checkRoot(typeURL)
	e.sendAll(e.core.subscribe(typeURL, names))
}

// Unsubscribe stops asking for names of ListenerType or ClusterType
// ("*": the wildcard). Dropping the wildcard, the proxy forgets what it
// held only through it. On Delta, a name dropped beside the wildcard
// stays until the server sends it again or names it removed (Settle
// waits for that; RuleWildcardOverlap if it does not come).
func (e *Envoy) Unsubscribe(typeURL string, names ...string) {
	e.t.Helper()
	e.checkRoot(typeURL)
	e.sendAll(e.core.unsubscribe(typeURL, names, time.Now()))
}

// checkRoot fails the test for a type the proxy asks for by the names its
// other resources need, which a test cannot change, and for one it has
// not asked for yet (Listeners, until its first clusters are warm).
func (e *Envoy) checkRoot(typeURL string) {
	e.t.Helper()
	if !wildcardType(typeURL) {
		e.t.Fatalf("envoysim: the proxy asks for %s by the names its other resources need", short(typeURL))
	}
	if !e.core.subs[typeURL].started {
		e.t.Fatalf("envoysim: the proxy has not asked for %s yet", short(typeURL))
	}
}

// Reconnect ends the proxy's stream and opens another on cc, as Envoy
// does when its stream breaks: it asks for every type again, in the
// order it first did, naming what it holds (SotW: the version it
// accepted last; Delta: each resource's version), and keeps serving
// what it holds meanwhile.
func (e *Envoy) Reconnect(cc grpc.ClientConnInterface) {
	e.t.Helper()
	e.w.close()
	e.w = openWire(e.t, e.core.delta, cc, e.node)
	e.sendAll(e.core.restart())
}
