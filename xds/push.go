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
	// ran records the round that ran: the names it handed on, the
	// streams it woke and those of them still busy with the previous one.
	ran(r pace.Round)
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
	var routes routing[*conn] // kept from round to round
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
			rounds.change()
		case <-rounds.due():
			rounds.ran(s.pushDirty(&routes))
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
func (p *paced) ran(r pace.Round) {
	p.t.Ran(r)
	p.stats.window(p.t.Window())
}

// debounced is PushDebounce's roundTimer: a round once no change came for
// the debounce period, or the max delay after the first.
type debounced struct{ t *debounce.Timer }

func (d *debounced) change()               { d.t.Add() }
func (d *debounced) due() <-chan time.Time { return d.t.C() }
func (d *debounced) ran(pace.Round)        { d.t.Done() }
func (d *debounced) stop()                 { d.t.Done() }

// holdWindows is how many push windows a stream holds a push for an
// unanswered response at most: long enough for a busy proxy to catch up,
// short enough that one that never answers still gets changes within a
// second (at the default window).
const holdWindows = 10

// churnWindows is how many push windows the window grows to at most
// while changes keep coming: the latency a push may take under sustained
// churn, 400 ms at the default window. It grows with the square root of
// the rate (pace.Policy): 183 ms at 100 changes a second, 316 ms at 300.
const churnWindows = 4

// pacePolicy is the paced mode's rule: rounds at least the push window
// apart, widened under churn up to churnWindows of it, and while the
// streams fall behind at most to the max delay.
func (s *Server) pacePolicy() pace.Policy {
	w := s.opts.pushWindow
	return pace.Policy{Window: w, ChurnWindow: churnWindows * w, MaxWindow: s.opts.maxDelay, MaxHold: holdWindows * w}
}

// pushDirty notifies the streams the index routes the changed names to
// of the names each subscribes to or holds, and returns the round: how
// many of the names reach a stream, how many streams it woke and how
// many of those had not yet taken their previous wake-up. Until it
// returns, a stream that flushes before its turn takes the round's names
// in itself (session.catchUp). No lock is held across the streams: each
// notify takes its stream's own. routes is the empty routing the round
// fills, reset once it returns.
func (s *Server) pushDirty(routes *routing[*conn]) (r pace.Round) {
	start := time.Now()
	dirty := s.cache.takeRound()
	defer s.cache.endRound()
	if len(dirty) == 0 {
		return r
	}
	n := 0
	for _, names := range dirty {
		n += len(names)
	}
	s.subs.routeInto(dirty, routes)
	defer routes.reset()
	r.Changes = routes.reached
	for c, changed := range routes.streams {
		w, b := c.notify(changed)
		if w {
			r.Woken++
		}
		if b {
			r.Behind++
		}
	}
	s.stats.round(n, time.Since(start))
	return r
}
