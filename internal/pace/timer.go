package pace

import "time"

// Timer paces rounds for one select loop: Change records a change, C fires
// when the round is due, and Ran records the round. Its methods must be
// called from that one goroutine. A Timer starts no goroutine; call Stop
// when the loop ends.
type Timer struct {
	pacer *Pacer
	timer *time.Timer
	// armed is set while timer runs for a pending round.
	armed bool
}

// NewTimer returns a Timer with no change waiting.
func NewTimer(p Policy) *Timer { return &Timer{pacer: New(p)} }

// Change records a change now and arms the timer for the round it is
// owed, unless it is armed already: a change never delays a due round.
func (t *Timer) Change() {
	t.pacer.Change()
	t.arm(time.Now())
}

// C returns the channel that receives once the round is due, or nil
// (which blocks forever in a select) while no change waits. After a
// receive from it, run the round and call Ran.
func (t *Timer) C() <-chan time.Time {
	if !t.armed {
		return nil
	}
	return t.timer.C
}

// Ran records round r, which has just run; see Pacer.Ran.
func (t *Timer) Ran(r Round) {
	t.armed = false
	t.pacer.Ran(time.Now(), r)
}

// Window returns the current least time between rounds.
func (t *Timer) Window() time.Duration { return t.pacer.Window() }

// Rate returns the estimated changes per second; see Pacer.Rate.
func (t *Timer) Rate() float64 { return t.pacer.Rate() }

// Stop stops the timer; the Timer must not be used after.
func (t *Timer) Stop() {
	if t.timer != nil {
		t.timer.Stop()
	}
	t.armed = false
}

func (t *Timer) arm(now time.Time) {
	if t.armed {
		return
	}
	wait, ok := t.pacer.Wait(now)
	if !ok {
		return
	}
	if t.timer == nil {
		t.timer = time.NewTimer(wait)
	} else {
		t.timer.Reset(wait)
	}
	t.armed = true
}
