package pace

import "time"

// Policy says how rounds are spaced.
//
// Window is the least time between two rounds; zero or less makes every
// change due at once. MaxWindow caps how far the window widens while the
// receivers fall behind; below Window it is taken as Window. MaxHold is
// how long Hold holds a push to a receiver that does not answer; zero or
// less: not at all. The zero Policy hands on every change as it comes.
type Policy struct {
	Window    time.Duration
	MaxWindow time.Duration
	MaxHold   time.Duration
}

// behindShare is the share of a round's receivers that, still busy with
// the previous round, makes the next window wider: one in four. A few
// slow receivers are theirs to bear (Hold); a quarter of them behind at
// once means the sender itself is short of CPU.
const behindShare = 4

// maxWindow returns the cap of the window, never below Window.
func (p Policy) maxWindow() time.Duration { return max(p.Window, p.MaxWindow) }

// Hold returns how long a receiver should hold a push while a message it
// was sent at sent is unanswered (unanswered false: not at all, 0): until
// it answers, which the caller notices, or MaxHold after sent, so a
// receiver that never answers still gets a push that often. Never
// negative.
func (p Policy) Hold(sent time.Time, unanswered bool, now time.Time) time.Duration {
	if !unanswered {
		return 0
	}
	return max(0, sent.Add(p.MaxHold).Sub(now))
}

// Pacer decides when the next round is due. The zero Pacer is not usable;
// create one with New. It reads no clock: every method takes the time.
type Pacer struct {
	policy Policy
	// window is the current least time between rounds, from
	// policy.Window up to policy.maxWindow().
	window time.Duration
	// last is when the last round ran; zero before the first.
	last time.Time
	// pending is set while a change waits for a round.
	pending bool
}

// New returns a Pacer with no change waiting, whose first change is due at
// once.
func New(p Policy) *Pacer {
	return &Pacer{policy: p, window: max(p.Window, 0)}
}

// Change records that a change came: the next round is owed.
func (p *Pacer) Change() { p.pending = true }

// Wait returns how long after now the next round is due, and false when
// no change waits. A change after a window without rounds is due at once;
// later ones wait for the window since the last round to pass. Never
// negative.
func (p *Pacer) Wait(now time.Time) (time.Duration, bool) {
	if !p.pending {
		return 0, false
	}
	if p.last.IsZero() {
		return 0, true
	}
	return max(0, p.last.Add(p.window).Sub(now)), true
}

// Window returns the current least time between rounds.
func (p *Pacer) Window() time.Duration { return p.window }

// Ran records a round at now that woke woken receivers, behind of which
// were still busy with the previous round, and adapts the window to it:
// double (up to the cap) when at least a quarter were behind, halved
// (down to the policy's window) otherwise. A policy without a window never
// widens. Changes that come after now wait for the next round.
func (p *Pacer) Ran(now time.Time, woken, behind int) {
	p.pending, p.last = false, now
	if p.policy.Window <= 0 {
		return
	}
	if behind > 0 && behind*behindShare >= woken {
		p.window = min(2*p.window, p.policy.maxWindow())
		return
	}
	p.window = max(p.window/2, p.policy.Window)
}
