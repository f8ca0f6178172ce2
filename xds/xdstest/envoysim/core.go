package envoysim

import (
	"errors"
	"fmt"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// response is one response, SotW or Delta, as the core reads it.
type response struct {
	typeURL, version, nonce string
	resources               []wireResource
	// removed are a Delta response's removed_resources.
	removed []string
}

// wireResource is one resource of a response: a Delta Resource's name
// and version, or a SotW response's bare Any (name and version empty).
type wireResource struct {
	name, version string
	any           *anypb.Any
}

// request is one request the proxy sends. The wire (wire.go) takes the
// fields of its protocol: SotW the whole list of names with the version
// accepted; Delta the names subscribed and unsubscribed.
type request struct {
	typeURL string
	// answer is set for an ACK or NACK of the response with nonce; nack
	// holds a NACK's message.
	answer      bool
	nonce, nack string
	// version is the version last accepted; names the subscription.
	version string
	names   []string
	// subscribe and unsubscribe are a Delta request's changes, initial
	// its initial_resource_versions.
	subscribe, unsubscribe []string
	initial                map[string]string
}

// core is the proxy's protocol state, as a pure state machine: responses
// go in (handle), requests and violations come out. It does no I/O and
// reads no clock: callers pass now.
type core struct {
	delta bool
	opts  *options
	subs  map[string]*subscription
	cfg   *Config
	unsub *unsubscribed
	// overlap holds, on Delta, the names dropped while a wildcard may
	// hold them, since when, until the server says which.
	overlap map[key]time.Time
	// responses counts the responses handled.
	responses  int
	stats      Stats
	violations []Violation
}

func newCore(delta bool, opts *options) *core {
	c := &core{delta: delta, opts: opts, subs: map[string]*subscription{}, cfg: newConfig(),
		unsub: newUnsubscribed(), overlap: map[key]time.Time{}, stats: newStats()}
	for _, t := range startOrder {
		c.subs[t] = newSubscription(t)
	}
	c.subs[ClusterType].wildcard = true
	c.subs[ListenerType].wildcard = true
	return c
}

func (c *core) violate(rule Rule, typeURL, name, format string, args ...any) {
	c.violations = append(c.violations, Violation{Rule: rule, TypeURL: typeURL, Name: name, Detail: fmt.Sprintf(format, args...)})
}

// takeViolations returns the violations found since the last call.
func (c *core) takeViolations() []Violation {
	v := c.violations
	c.violations = nil
	return v
}

// start returns the proxy's first request: Envoy asks for its clusters
// first, and for its listeners only once they are warm (follow).
func (c *core) start() []request {
	return []request{c.subscribeRequest(c.subs[ClusterType], nil, nil)}
}

// handle takes one response and returns the requests it makes the proxy
// send, in order: the subscriptions it changes, then its ACK or NACK.
func (c *core) handle(r *response, now time.Time) []request {
	c.responses++
	c.stats.received(r)
	s := c.subs[r.typeURL]
	if s == nil || !s.started {
		c.violate(RuleUnknownType, r.typeURL, "", "response of a type the proxy never asked for")
		return nil
	}
	if r.nonce == "" {
		c.violate(RuleNoNonce, r.typeURL, "", "response without a nonce")
	}
	got, err := c.read(s, r)
	if err != nil {
		c.stats.Nacks[r.typeURL]++
		if !c.opts.allowNacks {
			c.violate(RuleNack, r.typeURL, "", "%v", err)
		}
		return []request{{typeURL: r.typeURL, answer: true, nonce: r.nonce, nack: err.Error(), version: s.accepted, names: s.list()}}
	}
	c.apply(r.typeURL, got, now)
	s.accepted, s.nonce = r.version, r.nonce
	reqs := c.follow()
	return append(reqs, request{typeURL: r.typeURL, answer: true, nonce: r.nonce, version: r.version, names: s.list()})
}

// update is what a response changes of one type: the resources it
// carries, by name, and the names it removes.
type update struct {
	resources map[string]proto.Message
	versions  map[string]string
	order     []string
	removed   []string
	// full is set for a SotW Listener or Cluster response, which holds
	// every resource of the type: the others are removed.
	full bool
}

// read decodes and checks a response against the subscription. It
// returns an error, which the proxy NACKs, for what Envoy rejects: a
// resource it cannot decode or that breaks its constraints, a name twice.
// What the proxy ignores (a resource dropped while the server may not
// have read that) is left out; what breaks a rule is reported.
func (c *core) read(s *subscription, r *response) (*update, error) {
	u := &update{resources: map[string]proto.Message{}, versions: map[string]string{},
		full: !c.delta && wildcardType(r.typeURL)}
	var errs []error
	for _, wr := range r.resources {
		name, msg, err := decode(r.typeURL, wr.any)
		if err == nil && c.delta && wr.name != name {
			err = fmt.Errorf("resource named %q holds %q", wr.name, name)
		}
		if err == nil && u.resources[name] != nil {
			err = fmt.Errorf("%s %s twice in one response", short(r.typeURL), name)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.unsub.seen(r.typeURL, name)
		delete(c.overlap, key{r.typeURL, name})
		u.resources[name], u.versions[name] = msg, wr.version
		u.order = append(u.order, name)
		if c.delta && wr.version == "" {
			c.violate(RuleNoVersion, r.typeURL, name, "Delta resource without a version")
		}
	}
	if err := c.checkRoutes(r.typeURL, u); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.readRemoved(s, r, u)
	c.dropUnrequested(s, u)
	return u, nil
}

// readRemoved takes a Delta response's removed names.
func (c *core) readRemoved(s *subscription, r *response, u *update) {
	for _, n := range r.removed {
		c.unsub.seen(r.typeURL, n)
		delete(c.overlap, key{r.typeURL, n})
		if u.resources[n] != nil {
			c.violate(RuleSentAndRemoved, r.typeURL, n, "resource both sent and removed")
			continue
		}
		u.removed = append(u.removed, n)
	}
}

// dropUnrequested leaves out of u the resources the proxy did not ask
// for: those it dropped while the server may not have read that are
// ignored, as Envoy ignores them; any other is a violation.
func (c *core) dropUnrequested(s *subscription, u *update) {
	var keep []string
	for _, n := range u.order {
		switch {
		case s.wants(n):
			keep = append(keep, n)
			continue
		case c.unsub.inFlight(s.typeURL, n):
		case c.unsub.settled[key{s.typeURL, n}]:
			c.violate(RuleUnrequested, s.typeURL, n, "sent after the server read that the proxy dropped it")
		default:
			c.violate(RuleUnrequested, s.typeURL, n, "never asked for on this stream (%s before what names it?)", short(s.typeURL))
		}
		delete(u.resources, n)
	}
	u.order = keep
}

// checkRoutes rejects, as Envoy does, a route configuration that asks for
// its clusters to be validated (validate_clusters) and names one the proxy
// does not know.
func (c *core) checkRoutes(typeURL string, u *update) error {
	if typeURL != RouteType {
		return nil
	}
	for _, n := range u.order {
		rc := u.resources[n].(*routev3.RouteConfiguration)
		if !rc.GetValidateClusters().GetValue() {
			continue
		}
		for _, cl := range routeClusters(rc) {
			if c.cfg.Clusters[cl] == nil && c.cfg.WarmingClusters[cl] == nil {
				return fmt.Errorf("route configuration %s: unknown cluster %s", n, cl)
			}
		}
	}
	return nil
}
