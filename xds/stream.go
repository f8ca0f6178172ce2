package xds

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StreamKind is the protocol of a stream.
type StreamKind string

// Stream kinds.
const (
	SotW  StreamKind = "sotw"
	Delta StreamKind = "delta"
)

// conn is one ADS stream. Its loop owns the subscription state; mu guards
// it against the registry's readers and guards pending against the
// server's notifications.
type conn struct {
	id        uint64
	kind      StreamKind
	peer      string
	connected time.Time
	srv       *Server
	// wake has room for one signal: notifications coalesce in pending.
	wake chan struct{}
	// sendFn sends one response on the stream and returns the bytes of
	// the resources it carried.
	sendFn func(update) (int, error)

	mu sync.Mutex // guards following
	// pending holds, per type, the names to recompute on the next flush.
	pending map[string]map[string]struct{}
	types   map[string]*typeState
	node    *core.Node
	// ns is the proxy's namespace under isolation, when nsOK.
	ns   string
	nsOK bool
	// certIdentity is set when ns comes from the client certificate
	// (WithPeerNamespace) rather than the node.
	certIdentity bool
	nonce        uint64
	// unansweredSince is set while the stream is reported as leaving a
	// response unanswered longer than WithUnansweredAfter.
	unansweredSince time.Time
	disconnected    time.Time
	// retainedNames counts, once disconnected, the names its state holds:
	// what keeping it in the registry costs (WithMaxRetainedNames).
	retainedNames int
	closeErr      string
}

func newConn(s *Server, id uint64, kind StreamKind, peer string) *conn {
	return &conn{
		id:        id,
		kind:      kind,
		peer:      peer,
		connected: time.Now(),
		srv:       s,
		wake:      make(chan struct{}, 1),
		pending:   map[string]map[string]struct{}{},
		types:     map[string]*typeState{},
	}
}

// runStream serves one stream: a goroutine turns recv into a channel, and
// the calling goroutine runs the loop that owns the stream's state.
// handle applies one request to the state; flushes send what is pending.
func runStream[Req any](ctx context.Context, s *Server, c *conn, recv func() (Req, error), handle func(Req) error) (err error) {
	select {
	case <-s.cache.ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopping:
		return status.Error(codes.Unavailable, "xds: server shutting down")
	}
	s.connect(c)
	defer func() { s.disconnect(c, err) }()

	reqs := make(chan Req)
	recvErr := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	s.recvWG.Add(1)
	go func() {
		defer s.recvWG.Done()
		for {
			req, err := recv()
			if err != nil {
				if status.Code(err) == codes.ResourceExhausted {
					// gRPC refused a request larger than
					// WithMaxMessageSize and ends the stream.
					c.mu.Lock()
					c.exceededLocked(LimitMessageSize, err)
					c.mu.Unlock()
				}
				recvErr <- err
				return
			}
			select {
			case reqs <- req:
			case <-done:
				return
			}
		}
	}()

	w := newUnansweredWatch(c)
	defer w.stop()
	for {
		select {
		case <-w.fired():
			w.check()
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stopping:
			return status.Error(codes.Unavailable, "xds: server shutting down")
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case req := <-reqs:
			if err := handle(req); err != nil {
				return err
			}
			if err := c.flush(); err != nil {
				return err
			}
			w.arm()
		case <-c.wake:
			if err := c.flush(); err != nil {
				return err
			}
			w.arm()
		}
	}
}

// servedType checks a request's type URL: an error when it has none, and
// false for a type this server does not serve — such a request is ignored
// and creates no per-stream state, so it cannot grow memory; it is
// counted in Stats.UnknownTypes.
func (c *conn) servedType(typeURL string) (bool, error) {
	if typeURL == "" {
		return false, status.Error(codes.InvalidArgument, "xds: request without type_url")
	}
	if !contains(c.srv.typeURLs, typeURL) {
		c.srv.stats.unknownType(typeURL)
		return false, nil
	}
	return true, nil
}

// typeStateLocked returns the state of typeURL, creating it. c.mu must be
// held.
func (c *conn) typeStateLocked(typeURL string) *typeState {
	ts := c.types[typeURL]
	if ts == nil {
		ts = newTypeState(typeURL)
		c.types[typeURL] = ts
	}
	return ts
}

// addPendingLocked marks names of typeURL for recomputation. c.mu must be
// held.
func (c *conn) addPendingLocked(typeURL string, names []string) {
	p := c.pending[typeURL]
	if p == nil {
		p = make(map[string]struct{}, len(names))
		c.pending[typeURL] = p
	}
	for _, n := range names {
		p[n] = struct{}{}
	}
}

// subscribeLocked applies a subscription change of typeURL and marks what
// it affects as pending. c.mu must be held.
func (c *conn) subscribeLocked(ts *typeState, add, remove []string, wildcard bool) {
	names, all := ts.subscribe(add, remove, wildcard)
	if c.srv.opts.namespaceOf != nil && len(names) > 0 {
		c.srv.cache.mu.RLock()
		c.denyLocked(ts.typeURL, names)
		c.srv.cache.mu.RUnlock()
	}
	if all {
		// Every name of the type, unsorted: pending is a set.
		c.srv.cache.mu.RLock()
		names = slices.AppendSeq(names, maps.Keys(c.srv.cache.types[ts.typeURL]))
		c.srv.cache.mu.RUnlock()
	}
	c.addPendingLocked(ts.typeURL, names)
}

// checkNamesLocked returns a ResourceExhausted error, which ends the
// stream, when a request would leave ts with after() subscriptions and the
// stream with more than WithMaxSubscribedNames in all. upper bounds
// after(), and spares computing it while the stream is well below the
// limit. c.mu must be held.
func (c *conn) checkNamesLocked(ts *typeState, upper int, after func() int) error {
	limit := c.srv.opts.maxNames
	if limit <= 0 {
		return nil
	}
	others := 0
	for _, o := range c.types {
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
	err := status.Errorf(codes.ResourceExhausted,
		"xds: request would subscribe the stream to %d resource names, over the limit of %d (%s)", total, limit, LimitSubscribedNames)
	c.exceededLocked(LimitSubscribedNames, err)
	return err
}

// exceededLocked logs and counts a stream ended by the named limit. c.mu
// must be held.
func (c *conn) exceededLocked(limit string, err error) {
	c.srv.stats.limit(limit)
	c.srv.opts.logger.Warn("xds: stream ended by a limit", "limit", limit, "proxy", c.nodeIDLocked(), "peer", c.peer, "error", err)
}

// notify adds the changed names the stream subscribes to to its pending
// set and wakes its loop. It never blocks.
func (c *conn) notify(changed map[string][]string) {
	woken := false
	c.mu.Lock()
	for typeURL, names := range changed {
		ts := c.types[typeURL]
		if ts == nil {
			continue
		}
		var p map[string]struct{}
		for _, n := range names {
			if _, held := ts.sent[n]; !held && !ts.subscribed(n) {
				continue
			}
			if p == nil {
				p = c.pending[typeURL]
				if p == nil {
					p = map[string]struct{}{}
					c.pending[typeURL] = p
				}
			}
			p[n] = struct{}{}
			woken = true
		}
	}
	c.mu.Unlock()
	if woken {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// update is one response to send.
type update struct {
	typeURL   string
	version   string
	nonce     string
	resources []*resource
	removed   []string
	changed   int
	built     time.Time
}

// flush builds the responses for everything pending, under one read of
// the cache, and sends them in push order.
func (c *conn) flush() error {
	now := time.Now()
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]map[string]struct{}{}
	var updates []update
	cache := c.srv.cache
	cache.mu.RLock()
	var hidden func(*resource) bool
	if c.srv.opts.namespaceOf != nil {
		hidden = c.hiddenLocked
	}
	for _, typeURL := range c.orderLocked() {
		ts := c.types[typeURL]
		names := pending[typeURL]
		if len(names) == 0 && !ts.respond {
			continue
		}
		changed, removed := ts.diff(names, cache.types[typeURL], hidden)
		resuming := ts.resuming
		ts.resuming = false
		u := update{typeURL: typeURL, changed: len(changed), built: now}
		switch {
		case c.kind == Delta:
			if len(changed) == 0 && len(removed) == 0 {
				if resuming {
					// Every version the client named on reconnecting
					// is current.
					c.resumedLocked(ts, now)
				}
				continue
			}
			u.resources, u.removed = changed, removed
		case fullStateType(typeURL):
			if len(changed) == 0 && len(removed) == 0 && !ts.respond {
				continue
			}
			u.resources = ts.held()
		default:
			if len(changed) == 0 {
				continue
			}
			u.resources = changed
		}
		ts.respond = false
		c.nonce++
		u.nonce = strconv.FormatUint(c.nonce, 10)
		// The version is what the client holds once it accepts the
		// response, by content: any replica would send the same.
		u.version = ts.digest.String()
		ts.nonce, ts.version, ts.lastPush, ts.answered = u.nonce, u.version, now, true
		ts.sentResponse(u.nonce, now)
		ts.pushes++
		updates = append(updates, u)
	}
	cache.mu.RUnlock()
	c.mu.Unlock()

	for _, u := range updates {
		if err := c.srv.send(c, u); err != nil {
			return err
		}
	}
	return nil
}

// orderLocked returns the stream's types in push order, then any others
// by URL. c.mu must be held.
func (c *conn) orderLocked() []string {
	out := make([]string, 0, len(c.types))
	for _, t := range pushOrder {
		if _, ok := c.types[t]; ok {
			out = append(out, t)
		}
	}
	var rest []string
	for t := range c.types {
		if !contains(pushOrder, t) {
			rest = append(rest, t)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// resumedLocked records that the first request of ts's type needed no
// response: the client holds, from an earlier stream, the current
// resources, which ts now holds as sent and acknowledged at their digest.
// c.mu must be held.
func (c *conn) resumedLocked(ts *typeState, now time.Time) {
	v := ts.digest.String()
	ts.version, ts.ackedVersion, ts.ackedAt, ts.resumed = v, v, now, true
	c.srv.stats.resume(ts.typeURL)
	c.srv.opts.logger.Debug("xds: proxy resumed holding the current config", "proxy", c.nodeIDLocked(), "type", shortType(ts.typeURL), "version", v, "resources", len(ts.sent))
}

// answerLocked records an ACK or NACK of typeURL. c.mu must be held.
func (c *conn) answerLocked(ts *typeState, version, nonce string, nack *Nack) {
	if ts.answer(version, nonce, nack, time.Now()) {
		c.srv.stats.ack(ts.typeURL, nack != nil)
		if o := c.srv.opts.observer; o != nil {
			if nack != nil {
				o.Nack(ts.typeURL)
			} else {
				o.Ack(ts.typeURL)
			}
		}
		if nack != nil {
			c.srv.opts.logger.Warn("xds: proxy rejected config", "proxy", c.nodeIDLocked(), "type", shortType(ts.typeURL), "nonce", nonce, "error", nack.Message)
		}
		c.answeringAgainLocked(time.Now())
	}
}

func (c *conn) nodeIDLocked() string {
	if c.node == nil {
		return ""
	}
	return c.node.GetId()
}
