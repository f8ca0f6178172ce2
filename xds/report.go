package xds

import "time"

// reportLocked counts, logs and observes the events of c's session: the
// stream code's side of what the pure session reports. c.mu must be held
// (the logs name the session's node).
func (c *conn) reportLocked(events []event, now time.Time) {
	srv := c.srv
	log := srv.opts.logger
	for _, e := range events {
		switch e.kind {
		case evUnknownType:
			srv.stats.unknownType(e.typeURL)
		case evIdentityMismatch:
			srv.stats.identityMismatch()
			log.Warn("xds: node's namespace differs from its certificate's; stream refused",
				"proxy", c.s.nodeID(), "peer", c.peer, "nodeNamespace", e.detail, "certNamespace", c.s.ns, "certHasNamespace", c.s.nsOK)
		case evUnauthenticated:
			srv.stats.unauthenticated()
			log.Warn("xds: stream without a verified client certificate refused",
				"proxy", c.s.nodeID(), "peer", c.peer)
		case evAnswer:
			c.answeredLocked(e, now)
		case evLimit:
			srv.stats.limit(e.name)
			log.Warn("xds: stream ended by a limit", "limit", e.name, "proxy", c.s.nodeID(), "peer", c.peer, "error", e.err)
		case evDenied:
			srv.stats.deny(e.typeURL)
			log.Warn("xds: resource hidden from proxy's namespace",
				"proxy", c.s.nodeID(), "namespace", c.s.ns, "type", shortType(e.typeURL), "resource", e.name, "visibleTo", e.detail)
		case evResumed:
			srv.stats.resume(e.typeURL)
			log.Debug("xds: proxy resumed holding the current config",
				"proxy", c.s.nodeID(), "type", shortType(e.typeURL), "version", e.version, "resources", e.n)
		}
	}
}

// answeredLocked reports an ACK or NACK. c.mu must be held.
func (c *conn) answeredLocked(e event, now time.Time) {
	nack := e.nack != nil
	c.srv.stats.ack(e.typeURL, nack)
	if o := c.srv.opts.observer; o != nil {
		if nack {
			o.Nack(e.typeURL)
		} else {
			o.Ack(e.typeURL)
		}
	}
	if nack {
		c.srv.opts.logger.Warn("xds: proxy rejected config", "proxy", c.s.nodeID(), "type", shortType(e.typeURL), "nonce", e.nonce, "error", e.nack.Message)
	}
	c.answeringAgainLocked(now)
}
