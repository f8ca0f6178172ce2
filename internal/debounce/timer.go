package debounce

import "time"

// Timer debounces events for one select loop: Add records an event, C fires
// when the batch is due, and Done closes the batch. Its methods must be
// called from that one goroutine. A Timer starts no goroutine and needs no
// stopping: an unreferenced Timer is collected even with a batch open.
type Timer struct {
	policy Policy
	timer  *time.Timer
	first  time.Time // the open batch's first event
	open   bool
}

// NewTimer returns a Timer with no batch open.
func NewTimer(p Policy) *Timer {
	return &Timer{policy: p}
}

// Add records an event now: it opens a batch if none is open, and (re)arms
// the timer for the policy's wait.
func (t *Timer) Add() {
	now := time.Now()
	if !t.open {
		t.first, t.open = now, true
	}
	wait := t.policy.Wait(t.first, now)
	if t.timer == nil {
		t.timer = time.NewTimer(wait)
		return
	}
	t.timer.Reset(wait)
}

// C returns the channel that receives once the open batch is due, or nil
// (which blocks forever in a select) while no batch is open. After a receive
// from it, call Done.
func (t *Timer) C() <-chan time.Time {
	if !t.open {
		return nil
	}
	return t.timer.C
}

// Done closes the open batch, if any, and stops its timer, so the next Add
// opens a new one. Call it when C fires, or to drop a batch early.
func (t *Timer) Done() {
	if t.timer != nil {
		t.timer.Stop()
	}
	t.open = false
}
