package pace

import (
	"math"
	"time"
)

// Policy says how rounds are spaced.
//
// Window is the least time between two rounds; zero or less makes every
// change due at once. ChurnWindow is the widest the window grows while
// changes keep coming (see [Pacer.Ran]); at or below Window (the
// default, zero) it never grows for churn. MaxWindow caps how far the
// window widens while the receivers fall behind; below Window it is taken
// as Window. MaxHold is how long Hold holds a push to a receiver that
// does not answer; zero or less: not at all. The zero Policy hands on
// every change as it comes.
type Policy struct {
	Window      time.Duration
	ChurnWindow time.Duration
	MaxWindow   time.Duration
	MaxHold     time.Duration
}

// Round is what one round did, for [Pacer.Ran].
type Round struct {
	// Changes counts the changes the round handed on.
	Changes int
	// Woken counts the receivers it woke, Behind those of them still
	// busy with the previous round.
	Woken, Behind int
}

// behindShare is the share of a round's receivers that, still busy with
// the previous round, makes the next window wider: one in four. A few
// slow receivers are theirs to bear (Hold); a quarter of them behind at
// once means the sender itself is short of CPU.
const behindShare = 4

// churnChanges is how many changes a base window must carry, on average,
// before the window grows for churn. Below it a round carries a change or
// two, each going to its own receivers: a wider window would only delay
// them. Above it rounds overlap on receivers, and a wider one merges
// their pushes.
const churnChanges = 3

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

// churnWindow returns the window for changes coming at rate per second:
// Window while a base window carries at most churnChanges of them, then
// growing with the square root of the rate, up to ChurnWindow. At the
// defaults of meshd's server (100 ms, up to 400 ms) that is 100 ms up to
// 30 changes a second, 183 ms at 100 and 316 ms at 300: the wait grows
// by half as much as the rate, while the changes a round carries, and so
// the pushes it can merge, grow by half as much again.
func (p Policy) churnWindow(rate float64) time.Duration {
	perWindow := rate * p.Window.Seconds()
	if p.ChurnWindow <= p.Window || perWindow <= churnChanges {
		return p.Window
	}
	w := time.Duration(float64(p.Window) * math.Sqrt(perWindow/churnChanges))
	return min(w, p.ChurnWindow)
}

// Pacer decides when the next round is due. The zero Pacer is not usable;
// create one with New. It reads no clock: every method takes the time.
type Pacer struct {
	policy Policy
	// backoff is the window the receivers' falling behind asks for, from
	// policy.Window up to policy.maxWindow(); churn the one the rate of
	// changes asks for (policy.churnWindow). The window is the wider.
	backoff, churn time.Duration
	// changes and elapsed are running means of the changes per round
	// and of the seconds between rounds, each the mean of the last
	// round's and the one before: their ratio estimates the rate. A mean
	// of per-round rates would overrate bursts, each counted over the
	// short time since the round before it.
	changes, elapsed float64
	// last is when the last round ran; zero before the first.
	last time.Time
	// pending is set while a change waits for a round.
	pending bool
}

// New returns a Pacer with no change waiting, whose first change is due at
// once.
func New(p Policy) *Pacer {
	w := max(p.Window, 0)
	return &Pacer{policy: p, backoff: w, churn: w}
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
	return max(0, p.last.Add(p.Window()).Sub(now)), true
}

// Window returns the current least time between rounds.
func (p *Pacer) Window() time.Duration { return max(p.backoff, p.churn) }

// Rate returns the estimated changes per second, as of the last round.
func (p *Pacer) Rate() float64 {
	if p.elapsed <= 0 {
		return 0
	}
	return p.changes / p.elapsed
}

// Ran records round r, run at now, and adapts the window to it.
//
// The receivers: the window doubles (up to MaxWindow) when at least a
// quarter of those woken were behind, and halves (down to Window)
// otherwise. The changes: the round's changes and the time since the
// last round, each averaged with those before, estimate the rate, and
// the window is at least the one that rate asks for (see [Policy]): it
// grows while changes keep coming and shrinks as they thin out, within
// a few rounds either way. A policy without a window never widens.
// Changes that come after now wait for the next round.
func (p *Pacer) Ran(now time.Time, r Round) {
	prev := p.last
	p.pending, p.last = false, now
	if p.policy.Window <= 0 {
		return
	}
	if !prev.IsZero() && now.After(prev) {
		p.changes = (p.changes + float64(r.Changes)) / 2
		p.elapsed = (p.elapsed + now.Sub(prev).Seconds()) / 2
	}
	p.churn = p.policy.churnWindow(p.Rate())
	if r.Behind > 0 && r.Behind*behindShare >= r.Woken {
		p.backoff = min(2*p.backoff, p.policy.maxWindow())
		return
	}
	p.backoff = max(p.backoff/2, p.policy.Window)
}
