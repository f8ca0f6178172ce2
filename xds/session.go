package xds

import (
	"sort"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// protocol is the configuration every session of a server shares.
type protocol struct {
	// typeURLs are the served types.
	typeURLs []string
	// namespaceOf is nil unless namespaces are isolated.
	namespaceOf func(*core.Node) (string, bool)
	// maxNames caps the names one stream holds subscribed; 0: no cap.
	maxNames int
	// anonymous is what a stream without a verified certificate gets
	// when namespaces are bound to certificates (WithAnonymous).
	anonymous Anonymous
	// variantOf tells a stream's client variant from its node; nil: none.
	variantOf func(*core.Node) string
	// warmingFor tells from a node whether its client warms updated
	// Clusters and Listeners (WithWarmingFor); nil: every client does.
	warmingFor func(*core.Node) bool
}

// session is the ADS protocol state of one stream, SotW or Delta, as a
// pure state machine, the way raft's RawNode is: requests (sotw, delta)
// and cache changes (changed) go in, responses (flush) and events
// (takeEvents) come out. It does no I/O, starts nothing, reads no clock
// (callers pass now) and takes no lock: the stream code (conn) owns it
// under conn.mu and hands it a view of the cache for each call.
type session struct {
	proto *protocol
	kind  StreamKind
	// pending holds, per type, the names to recompute on the next flush.
	pending map[string]map[string]struct{}
	types   map[string]*typeState
	// typeOrder is the stream's types in push order (order), kept as
	// types gains them: every flush walks it.
	typeOrder []string
	// node is the first node a request named.
	node *core.Node
	// ns is the proxy's namespace under isolation, when nsOK.
	ns   string
	nsOK bool
	// certIdentity is set when ns comes from the client certificate
	// (WithPeerNamespace) rather than the node; anonymous is set with it
	// when the stream has no verified certificate, and then
	// protocol.anonymous decides.
	certIdentity, anonymous bool
	// variant is the client variant of the stream (WithClientVariants).
	variant string
	// warms is set when the client warms updated Clusters and Listeners
	// on their dependent resources (WithWarmingFor): they are resent.
	warms bool
	// spare is an empty pending map for the next flush to swap in: a
	// flush under churn sends a name or two, and a new map for each was
	// among the server's largest allocations.
	spare map[string]map[string]struct{}
	// resend holds, per type, the names to send on the next flush even
	// if unchanged: what an updated Cluster or Listener waits for (warm).
	resend map[string]map[string]struct{}
	// round is the cache's round that last told the stream its names.
	round uint64
	// nonce numbers the responses.
	nonce uint64
	// events are those reported since the last takeEvents.
	events []event
}

func newSession(p *protocol, kind StreamKind) *session {
	return &session{
		proto:   p,
		kind:    kind,
		pending: map[string]map[string]struct{}{},
		types:   map[string]*typeState{},
		// Until a node says otherwise.
		warms: p.warmingFor == nil,
	}
}

// takeEvents returns the events reported since the last call. The slice
// is valid until the next report, which reuses its array: a stream
// reports an event with nearly every request (each ACK), and a fresh
// array for each was among the server's largest allocations under churn.
func (s *session) takeEvents() []event {
	ev := s.events
	s.events = s.events[:0]
	return ev
}

func (s *session) report(e event) { s.events = append(s.events, e) }

// servedType checks a request's type URL: an error when it has none, and
// false for a type the server does not serve — such a request is ignored
// and creates no state, so it cannot grow memory; it is reported
// (evUnknownType).
func (s *session) servedType(typeURL string) (bool, error) {
	if typeURL == "" {
		return false, refuse(refuseInvalid, "xds: request without type_url")
	}
	if !contains(s.proto.typeURLs, typeURL) {
		s.report(event{kind: evUnknownType, typeURL: typeURL})
		return false, nil
	}
	return true, nil
}

// typeState returns the state of typeURL, creating it.
func (s *session) typeState(typeURL string) *typeState {
	ts := s.types[typeURL]
	if ts == nil {
		ts = newTypeState(typeURL)
		s.types[typeURL] = ts
		s.typeOrder = s.order()
	}
	return ts
}

// addPending marks names of typeURL for recomputation.
func (s *session) addPending(typeURL string, names []string) {
	if len(names) == 0 {
		return
	}
	p := s.pendingSet(typeURL)
	for _, n := range names {
		p[n] = struct{}{}
	}
}

// subscribe applies a subscription change of ts's type and marks what it
// affects as pending.
func (s *session) subscribe(ts *typeState, v view, add, remove []string, wildcard bool) {
	empty := ts.names.len() == 0
	names, all := ts.subscribe(add, remove, wildcard)
	if empty && v.c != nil && ts.names.len() >= minSharedHeld {
		// Subscribed in one go: the list is offered to the cache, as a
		// first response's held list is (view.shareNames).
		ts.names.share(func(names []string) []string { return v.shareNames(ts.typeURL, names) })
	}
	if s.proto.namespaceOf != nil && len(names) > 0 {
		s.deny(v, ts.typeURL, names)
	}
	s.addPending(ts.typeURL, names)
	if all {
		// Every name of the type a wildcard takes, into a pending set
		// sized once.
		cur := s.resources(v, ts.typeURL)
		p := s.pending[ts.typeURL]
		if len(p) == 0 {
			p = make(map[string]struct{}, len(cur))
			s.pending[ts.typeURL] = p
		}
		for n, r := range cur {
			if !r.namedOnly {
				p[n] = struct{}{}
			}
		}
	}
}

// checkNames refuses (refuseLimit, which ends the stream) a request that
// would leave ts with after() subscriptions and the stream with more than
// WithMaxSubscribedNames in all. upper bounds after(), and spares
// computing it while the stream is well below the limit.
func (s *session) checkNames(ts *typeState, upper int, after func() int) error {
	limit := s.proto.maxNames
	if limit <= 0 {
		return nil
	}
	others := 0
	for _, o := range s.types {
		if o != ts {
			others += o.count()
		}
	}
	if others+upper <= limit {
		return nil
	}
	total := others + after()
	if total <= limit {
		return nil
	}
	err := refuse(refuseLimit, "xds: request would subscribe the stream to %d resource names, over the limit of %d (%s)",
		total, limit, LimitSubscribedNames)
	s.report(event{kind: evLimit, name: LimitSubscribedNames, err: err})
	return err
}

// changed adds the changed names the stream subscribes to, or holds, to
// its pending set, and reports whether it added any: whether the stream
// has something to flush. changed holds the changed names per type; v is
// the cache they changed in.
func (s *session) changed(changed map[string]map[string]struct{}, v view) bool {
	woken := false
	for typeURL, names := range changed {
		if ts := s.types[typeURL]; ts != nil && s.markChanged(ts, names, s.resources(v, typeURL)) {
			woken = true
		}
	}
	return woken
}

// markChanged adds the names of changed that ts subscribes to or holds to
// the pending set, and reports whether there were any; cur are the
// type's current resources. It walks the smaller side: the changed names,
// each looked up in the stream's state, or, for a stream naming fewer
// names than changed, its own names, each looked up in changed. A round's
// changed set is shared by every stream and warm in the cache; a thousand
// streams' own maps are not.
func (s *session) markChanged(ts *typeState, changed map[string]struct{}, cur map[string]*resource) bool {
	var p map[string]struct{}
	mark := func(n string) {
		if p == nil {
			p = s.pendingSet(ts.typeURL)
		}
		p[n] = struct{}{}
	}
	if !ts.wildcard && ts.names.len()+ts.sent.len() < len(changed) {
		for _, n := range ts.names.all() {
			if _, ok := changed[n]; ok {
				mark(n)
			}
		}
		for _, r := range ts.sent.all() {
			if _, ok := changed[r.name]; ok {
				mark(r.name)
			}
		}
		return p != nil
	}
	for n := range changed {
		// wants first: for a wildcard stream it reads only the shared
		// cache, sparing a miss in the stream's own large map.
		if ts.wants(n, cur[n]) {
			mark(n)
		} else if ts.sent.has(n) {
			mark(n)
		}
	}
	return p != nil
}

// pendingSet returns the pending set of typeURL, creating it.
func (s *session) pendingSet(typeURL string) map[string]struct{} {
	p := s.pending[typeURL]
	if p == nil {
		p = map[string]struct{}{}
		s.pending[typeURL] = p
	}
	return p
}

// begin opens a request of either protocol for typeURL: it checks the
// type and records the node, which counts whatever the type (a client
// names it in its first request only). It returns the type's state, nil
// for a type the server does not serve, and whether this is the stream's
// first request of the type.
func (s *session) begin(typeURL string, node *core.Node) (ts *typeState, first bool, err error) {
	served, err := s.servedType(typeURL)
	if err != nil {
		return nil, false, err
	}
	if err := s.setNode(node); err != nil {
		return nil, false, err
	}
	if !served {
		return nil, false, nil
	}
	first = s.types[typeURL] == nil
	return s.typeState(typeURL), first, nil
}

// answer records the ACK or NACK of version a request carries when it
// names a response nonce: a NACK when its error_detail is set.
func (s *session) answer(ts *typeState, version, nonce string, detail errorDetail, now time.Time) {
	if nonce == "" {
		return
	}
	nack := nackOf(version, nonce, detail, now)
	if ts.answer(version, nonce, nack, now) {
		s.report(event{kind: evAnswer, typeURL: ts.typeURL, nonce: nonce, nack: nack})
	}
}

// errorDetail is the error_detail of a request of either protocol.
type errorDetail interface {
	GetCode() int32
	GetMessage() string
}

// nackOf returns the NACK an answer's error_detail makes, or nil for an
// ACK.
func nackOf(version, nonce string, detail errorDetail, now time.Time) *Nack {
	if detail == nil || (detail.GetCode() == 0 && detail.GetMessage() == "") {
		return nil
	}
	return &Nack{Version: version, Nonce: nonce, Code: detail.GetCode(), Message: detail.GetMessage(), Time: now}
}

// resumed records that the first request of ts's type needed no
// response: the client holds, from an earlier stream, the current
// resources, which ts now holds as sent and acknowledged at their digest.
func (s *session) resumed(ts *typeState, now time.Time) {
	v := ts.digest.String()
	ts.version, ts.ackedVersion, ts.ackedAt, ts.resumed = v, v, now, true
	s.report(event{kind: evResumed, typeURL: ts.typeURL, version: v, n: ts.sent.len()})
}

// order returns the stream's types in push order, then any others by
// URL.
func (s *session) order() []string {
	out := make([]string, 0, len(s.types))
	for _, t := range pushOrder {
		if _, ok := s.types[t]; ok {
			out = append(out, t)
		}
	}
	var rest []string
	for t := range s.types {
		if !contains(pushOrder, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// oldestUnanswered returns when the oldest response still unanswered
// went out.
func (s *session) oldestUnanswered() (time.Time, bool) {
	var oldest time.Time
	for _, ts := range s.types {
		if len(ts.pending) > 0 && (oldest.IsZero() || ts.pending[0].at.Before(oldest)) {
			oldest = ts.pending[0].at
		}
	}
	return oldest, !oldest.IsZero()
}

// newestUnanswered returns when the newest response still unanswered
// went out.
func (s *session) newestUnanswered() (time.Time, bool) {
	var newest time.Time
	for _, ts := range s.types {
		if n := len(ts.pending); n > 0 && ts.pending[n-1].at.After(newest) {
			newest = ts.pending[n-1].at
		}
	}
	return newest, !newest.IsZero()
}

// nodeID returns the id of the stream's node, "" before one is named.
func (s *session) nodeID() string {
	if s.node == nil {
		return ""
	}
	return s.node.GetId()
}
