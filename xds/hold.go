package xds

import "time"

// pushHold holds, under PushPaced, the wake-ups of a stream whose proxy
// has not answered its last response: the proxy is behind, and a push
// now would only queue behind the one it has not processed. The hold ends
// when the stream next flushes — on the proxy's answer, which the
// receiving goroutine applies and tells the loop of (conn.holding,
// conn.answered), or any other request — or when the policy's hold runs
// out (pace.Policy.Hold). It is owned by the stream's loop.
type pushHold struct {
	c     *conn
	timer *time.Timer
	// fire is the timer's channel while holding, nil otherwise.
	fire <-chan time.Time
}

// fired returns the channel the loop selects on; nil while not holding.
func (h *pushHold) fired() <-chan time.Time { return h.fire }

// hold reports whether a wake-up now must wait, and if so starts (or
// keeps) the hold.
func (h *pushHold) hold() bool {
	if h.fire != nil {
		return true
	}
	c := h.c
	if c.srv.opts.pushMode != PushPaced {
		return false
	}
	c.mu.Lock()
	sent, unanswered := c.s.newestUnanswered()
	d := c.srv.pacePolicy().Hold(sent, unanswered, time.Now())
	// Set with the read: an answer applied after it sees the hold.
	c.holding = d > 0
	c.mu.Unlock()
	if d <= 0 {
		return false
	}
	if h.timer == nil {
		h.timer = time.NewTimer(d)
	} else {
		h.timer.Reset(d)
	}
	h.fire = h.timer.C
	c.srv.stats.held()
	return true
}

// release ends the hold: the stream has flushed.
func (h *pushHold) release() {
	if h.fire != nil {
		h.timer.Stop()
		h.fire = nil
		h.c.mu.Lock()
		h.c.holding = false
		h.c.mu.Unlock()
	}
}
