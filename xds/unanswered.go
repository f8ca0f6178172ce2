package xds

import "time"

// unansweredWatch reports, once, a stream whose proxy leaves a response
// unanswered longer than WithUnansweredAfter — a proxy that stopped
// reading, hangs, or lost its connection without the server noticing — and
// the stream's conn reports when it answers again. It is owned by the
// stream's loop: arm after each flush, check when fired.
type unansweredWatch struct {
	c     *conn
	after time.Duration
	timer *time.Timer
	// fire is the timer's channel while armed, nil otherwise.
	fire <-chan time.Time
}

func newUnansweredWatch(c *conn) *unansweredWatch {
	return &unansweredWatch{c: c, after: c.srv.opts.unansweredAfter}
}

// fired returns the channel the loop selects on; nil while unarmed.
func (w *unansweredWatch) fired() <-chan time.Time { return w.fire }

// arm starts the timer for the oldest unanswered response, unless it runs
// already, the stream is reported already, or nothing is unanswered.
func (w *unansweredWatch) arm() {
	if w.after <= 0 || w.fire != nil {
		return
	}
	w.c.mu.Lock()
	oldest, ok := w.c.s.oldestUnanswered()
	reported := !w.c.unansweredSince.IsZero()
	w.c.mu.Unlock()
	if !ok || reported {
		return
	}
	d := max(time.Until(oldest.Add(w.after)), 0)
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	w.fire = w.timer.C
}

// check reports the stream if its oldest response has waited too long,
// and re-arms for a younger one otherwise.
func (w *unansweredWatch) check() {
	w.fire = nil
	c := w.c
	now := time.Now()
	c.mu.Lock()
	oldest, ok := c.s.oldestUnanswered()
	if ok && now.Sub(oldest) >= w.after && c.unansweredSince.IsZero() {
		c.unansweredSince = oldest
		c.srv.stats.unanswered()
		c.srv.opts.logger.Warn("xds: proxy is not answering responses",
			"proxy", c.s.nodeID(), "peer", c.peer, "stream", c.id, "waiting", now.Sub(oldest).Round(time.Millisecond))
	}
	c.mu.Unlock()
	w.arm()
}

func (w *unansweredWatch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// answeringAgainLocked ends a report of the stream as unanswering once no
// response has waited too long. c.mu must be held.
func (c *conn) answeringAgainLocked(now time.Time) {
	if c.unansweredSince.IsZero() {
		return
	}
	if oldest, ok := c.s.oldestUnanswered(); ok && now.Sub(oldest) >= c.srv.opts.unansweredAfter {
		return
	}
	c.srv.opts.logger.Info("xds: proxy is answering again",
		"proxy", c.s.nodeID(), "peer", c.peer, "stream", c.id, "after", now.Sub(c.unansweredSince).Round(time.Millisecond))
	c.unansweredSince = time.Time{}
}
