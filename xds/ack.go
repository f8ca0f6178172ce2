package xds

import (
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// A pure answer is a request that only ACKs a response: it names no new
// subscription, carries no error detail and is not a type's first
// request, so applying it changes nothing a flush would send. Most of a
// stream's requests under churn are such ACKs, one per push, and the
// stream's receiving goroutine applies them itself (conn.tryAnswer)
// rather than handing each to the stream's loop: the hand-off, the
// loop's wake-up, a read of the cache and an empty flush cost as much
// again as the push they answer.

// sotwAnswer applies req if it is a pure SotW answer, reporting whether
// it was; otherwise it changes nothing, and req goes to sotw.
func (s *session) sotwAnswer(req *discovery.DiscoveryRequest, now time.Time) bool {
	ts := s.answerable(req.GetTypeUrl(), req.ResponseNonce, req.GetErrorDetail())
	if ts == nil {
		return false
	}
	stale := req.ResponseNonce != ts.nonce
	names := req.ResourceNames
	same := sameList(names, ts.lastNames) || (len(names) == 0 && len(ts.lastNames) == 0 && unchanged(ts, names))
	if !stale && !same {
		// Maybe the same subscription listed anew, maybe a change: sotw
		// tells.
		return false
	}
	s.answer(ts, req.VersionInfo, req.ResponseNonce, nil, now)
	if !stale {
		ts.lastNames = req.ResourceNames
	}
	return true
}

// deltaAnswer applies req if it is a pure Delta answer, reporting whether
// it was; otherwise it changes nothing, and req goes to delta.
func (s *session) deltaAnswer(req *discovery.DeltaDiscoveryRequest, now time.Time) bool {
	ts := s.answerable(req.GetTypeUrl(), req.ResponseNonce, req.GetErrorDetail())
	if ts == nil || len(req.ResourceNamesSubscribe) > 0 || len(req.ResourceNamesUnsubscribe) > 0 || len(req.InitialResourceVersions) > 0 {
		return false
	}
	s.answer(ts, ts.version, req.ResponseNonce, nil, now)
	return true
}

// answerable returns the state of a request's type if the request may be
// a pure answer: an ACK, without error detail, of a response of a type
// the stream has, on a stream whose node is known and accepted (setNode
// has nothing left to check). Otherwise it returns nil.
func (s *session) answerable(typeURL, nonce string, detail errorDetail) *typeState {
	if nonce == "" || s.node == nil || (s.anonymous && s.proto.anonymous == AnonymousNone) {
		return nil
	}
	if detail != nil && (detail.GetCode() != 0 || detail.GetMessage() != "") {
		return nil
	}
	ts := s.types[typeURL]
	if ts == nil || !ts.answered {
		return nil
	}
	return ts
}

// tryAnswer applies req with answer, under c.mu, if it is a pure answer
// and no earlier request of the stream is still on its way to the loop;
// it reports whether it did. A held push waits for this answer: the loop
// is told (c.answered) to release it.
func (c *conn) tryAnswer(answer func(*session, time.Time) bool) bool {
	now := time.Now()
	c.mu.Lock()
	if c.queued > 0 || !answer(c.s, now) {
		c.queued++
		c.mu.Unlock()
		return false
	}
	c.reportLocked(c.s.takeEvents(), now)
	holding := c.holding
	c.mu.Unlock()
	if holding {
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return true
}
