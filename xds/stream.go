package xds

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

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

// conn is one ADS stream: the I/O around its session. Its loop feeds the
// session requests and wake-ups and sends what it returns; mu guards the
// session against the server's notifications and the registry's readers.
type conn struct {
	id   uint64
	kind StreamKind
	peer string
	// identity and certExpiry are those of the client certificate the
	// connection's TLS handshake verified (see ProxyStatus.Identity).
	identity   string
	certExpiry time.Time
	connected  time.Time
	// tc is the stream's connection; nil when not tracked.
	tc  *trackedConn
	srv *Server
	// wake has room for one signal: notifications coalesce in the
	// session's pending set.
	wake chan struct{}
	// answered has room for one signal: an answer the receiving
	// goroutine applied (tryAnswer) while the loop held a push for it.
	answered chan struct{}
	// sendFn sends one response on the stream and returns the bytes of
	// the resources it carried.
	sendFn func(update) (int, error)

	mu sync.Mutex // guards following
	s  *session
	// unansweredSince is set while the stream is reported as leaving a
	// response unanswered longer than WithUnansweredAfter.
	unansweredSince time.Time
	disconnected    time.Time
	// retainedNames counts, once disconnected, the names its state holds:
	// what keeping it in the registry costs (WithMaxRetainedNames).
	retainedNames int
	closeErr      string
	closeReason   CloseReason
	// queued counts the requests the receiving goroutine handed the loop
	// that it has not applied yet: while any is, an answer waits its turn
	// behind them.
	queued int
	// holding is set while the loop holds a push (pushHold).
	holding bool
	// endedNode is the node id, set once disconnected; read under the
	// server's lock by then.
	endedNode string
}

// session returns the record of c's ended stream. c.mu must be held, or
// c disconnected.
func (c *conn) session() Session {
	return Session{
		ID: c.id, Kind: c.kind, Peer: c.peer,
		ConnectedAt: c.connected, DisconnectedAt: c.disconnected,
		CloseReason: c.closeReason, CloseError: c.closeErr,
	}
}

func newConn(s *Server, id uint64, kind StreamKind, peer string) *conn {
	return &conn{
		id:        id,
		kind:      kind,
		peer:      peer,
		connected: time.Now(),
		srv:       s,
		wake:      make(chan struct{}, 1),
		answered:  make(chan struct{}, 1),
		s:         newSession(&s.proto, kind),
	}
}

// step is one input of the stream's session: a request applied to it, or
// nil for a wake-up, which only flushes.
type step func(s *session, v view, now time.Time) error

// protocolOf is how a stream's loop applies its protocol's requests.
type protocolOf[Req any] struct {
	// apply applies one request to the session (session.sotw or
	// session.delta).
	apply func(*session, Req, view, time.Time) error
	// answer applies a request that is a pure answer and reports whether
	// it was (session.sotwAnswer or session.deltaAnswer, see ack.go).
	answer func(*session, Req, time.Time) bool
}

// runStream serves one stream: a goroutine turns recv into a channel,
// applying pure answers itself, and the calling goroutine runs the loop
// that owns the stream's state.
func runStream[Req any](ctx context.Context, s *Server, c *conn, recv func() (Req, error), p protocolOf[Req]) (err error) {
	select {
	case <-s.cache.ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopping:
		return errShuttingDown
	}
	s.connect(c)
	defer func() { s.disconnect(c, err) }()

	// One channel for the stream's end and the server's: the loop waits
	// on a channel per input, and each costs every wait.
	end, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stopCtx, cancel)()
	done := make(chan struct{})
	defer close(done)
	in := receive(s, c, recv, p.answer, done)
	w := newUnansweredWatch(c)
	defer w.stop()
	h := &pushHold{c: c}
	defer h.release()
	for {
		var st step
		select {
		case <-w.fired():
			w.check()
			continue
		case <-h.fired():
		case <-end.Done():
			if s.stopCtx.Err() != nil {
				return errShuttingDown
			}
			return ctx.Err()
		case r := <-in:
			if errors.Is(r.err, io.EOF) {
				return nil
			} else if r.err != nil {
				return r.err
			}
			st = func(ss *session, v view, now time.Time) error {
				c.queued--
				return p.apply(ss, r.req, v, now)
			}
		case <-c.answered:
		case <-c.wake:
			if h.hold() {
				continue
			}
		}
		h.release()
		if err := c.run(st); err != nil {
			return err
		}
		w.arm()
	}
}

// errShuttingDown ends the streams when the server stops.
var errShuttingDown = status.Error(codes.Unavailable, "xds: server shutting down")

// received is one request of a stream, or the error that ended its
// receiving.
type received[Req any] struct {
	req Req
	err error
}

// receive starts the stream's receive goroutine, which applies each pure
// answer itself (conn.tryAnswer) and sends each other request on the
// returned channel until recv fails, then the error, unless done closes
// first.
func receive[Req any](s *Server, c *conn, recv func() (Req, error), answer func(*session, Req, time.Time) bool, done <-chan struct{}) <-chan received[Req] {
	in := make(chan received[Req])
	s.recvWG.Add(1)
	go func() {
		defer s.recvWG.Done()
		for {
			req, err := recv()
			if err != nil && status.Code(err) == codes.ResourceExhausted {
				// gRPC refused a request larger than
				// WithMaxMessageSize and ends the stream.
				c.mu.Lock()
				c.reportLocked([]event{{kind: evLimit, name: LimitMessageSize, err: err}}, time.Now())
				c.mu.Unlock()
			}
			if err == nil && c.tryAnswer(func(ss *session, now time.Time) bool { return answer(ss, req, now) }) {
				continue
			}
			select {
			case in <- received[Req]{req, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return in
}

// run applies in (nil: nothing) to the session and flushes it under one
// view of the cache, reports the session's events, and sends the
// responses in order. A refused request ends the stream with the
// refusal's status.
func (c *conn) run(in step) error {
	now := time.Now()
	var (
		updates []update
		err     error
	)
	c.mu.Lock()
	c.srv.cache.read(func(v view) {
		if in != nil {
			err = in(c.s, v, now)
		}
		if err == nil {
			updates = c.s.flush(v, now)
		}
		// Under the cache's read lock: a change applied after this step
		// is routed by the index as this step left it.
		c.srv.subs.apply(c, c.s.takeInterest())
	})
	c.reportLocked(c.s.takeEvents(), now)
	c.mu.Unlock()
	if err != nil {
		return statusOf(err)
	}
	for _, u := range updates {
		if err := c.srv.send(c, u); err != nil {
			return err
		}
	}
	return nil
}

// statusOf returns the gRPC status error of a session's refusal; other
// errors are returned as they are.
func statusOf(err error) error {
	var pe *protocolError
	if !errors.As(err, &pe) {
		return err
	}
	code := codes.InvalidArgument
	switch pe.why {
	case refuseLimit:
		code = codes.ResourceExhausted
	case refuseIdentity:
		code = codes.PermissionDenied
	case refuseUnauthenticated:
		code = codes.Unauthenticated
	}
	return status.Error(code, pe.msg)
}

// notify adds the changed names the stream subscribes to to its pending
// set and wakes its loop. It reports whether it woke the stream, and
// whether the stream had yet to take its previous wake-up: whether its
// loop is behind. It never blocks.
func (c *conn) notify(changed map[string]map[string]struct{}) (woken, behind bool) {
	c.mu.Lock()
	c.srv.cache.read(func(v view) {
		woken = c.s.changed(changed, v)
		c.s.round = v.round
	})
	c.mu.Unlock()
	if !woken {
		return false, false
	}
	select {
	case c.wake <- struct{}{}:
		return true, false
	default:
		return true, true
	}
}
