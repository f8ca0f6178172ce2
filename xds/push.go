package xds

import (
	"context"
	"time"

	"github.com/meshd/meshd/internal/debounce"
	"github.com/meshd/meshd/internal/pace"
)

// roundTimer says when the next round of pushes is due: the push mode's
// rule, for pushLoop's select.
type roundTimer interface {
	// change records a change.
	change()
	// due receives when a round is due; nil while none is.
	due() <-chan time.Time
	// ran records the round that ran, which woke woken streams, behind
	// of them still busy with the previous one.
	ran(woken, behind int)
	stop()
}

// pushLoop hands the changed names to the streams in rounds, as the push
// mode spaces them, until ctx ends.
func (s *Server) pushLoop(ctx context.Context) {
	var rounds roundTimer = &debounced{debounce.NewTimer(debounce.Policy{Quiet: s.opts.debounce, MaxDelay: s.opts.maxDelay})}
	if s.opts.pushMode == PushPaced {
		rounds = &paced{pace.NewTimer(s.pacePolicy()), s.stats}
	}
	defer rounds.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
			rounds.change()
		case <-rounds.due():
			rounds.ran(s.pushDirty())
		}
	}
}

// paced is PushPaced's roundTimer: a round at once when none ran for a
// window, otherwise once the window since the last has passed.
type paced struct {
	t     *pace.Timer
	stats *counters
}

func (p *paced) change()               { p.t.Change() }
func (p *paced) due() <-chan time.Time { return p.t.C() }
func (p *paced) stop()                 { p.t.Stop() }
func (p *paced) ran(woken, behind int) {
	p.t.Ran(woken, behind)
	p.stats.window(p.t.Window())
}

// debounced is PushDebounce's roundTimer: a round once no change came for
// the debounce period, or the max delay after the first.
type debounced struct{ t *debounce.Timer }

func (d *debounced) change()               { d.t.Add() }
func (d *debounced) due() <-chan time.Time { return d.t.C() }
func (d *debounced) ran(int, int)          { d.t.Done() }
func (d *debounced) stop()                 { d.t.Done() }

// holdWindows is how many push windows a stream holds a push for an
// unanswered response at most: long enough for a busy proxy to catch up,
// short enough that one that never answers still gets changes within a
// second (at the default window).
const holdWindows = 10

// pacePolicy is the paced mode's rule: rounds at least the push window
// apart, widened at most to the max delay.
func (s *Server) pacePolicy() pace.Policy {
	w := s.opts.pushWindow
	return pace.Policy{Window: w, MaxWindow: s.opts.maxDelay, MaxHold: holdWindows * w}
}

// pushDirty notifies the streams the index routes the changed names to
// of the names each subscribes to or holds, and returns how many streams
// it woke and how many of those had not yet taken their previous
// wake-up. Until it returns, a stream that flushes before its turn takes
// the round's names in itself (session.catchUp). No lock is held across the streams: each notify takes its
// stream's own.
func (s *Server) pushDirty() (woken, behind int) {
	start := time.Now()
	dirty := s.cache.takeRound()
	defer s.cache.endRound()
	if len(dirty) == 0 {
		return 0, 0
	}
	n := 0
	for _, names := range dirty {
		n += len(names)
	}
	for c, changed := range s.subs.route(dirty) {
		w, b := c.notify(changed)
		if w {
			woken++
		}
		if b {
			behind++
		}
	}
	s.stats.round(n, time.Since(start))
	return woken, behind
}
