package xds

import (
	"context"
	"time"

	"github.com/meshd/meshd/internal/debounce"
	"github.com/meshd/meshd/internal/pace"
)

// pushLoop hands the changed names to the streams in rounds, as the push
// mode spaces them, until ctx ends.
func (s *Server) pushLoop(ctx context.Context) {
	if s.opts.pushMode == PushDebounce {
		s.debounceLoop(ctx)
		return
	}
	s.pacedLoop(ctx)
}

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

// pacedLoop hands the dirty names to the streams at once when no round
// ran for a window, and otherwise once the window since the last round
// has passed; see PushPaced.
func (s *Server) pacedLoop(ctx context.Context) {
	rounds := pace.NewTimer(s.pacePolicy())
	defer rounds.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
			rounds.Change()
		case <-rounds.C():
			woken, behind := s.pushDirty()
			rounds.Ran(woken, behind)
			s.stats.window(rounds.Window())
		}
	}
}

// debounceLoop hands the dirty names to the streams once no change has
// come for the debounce period, or the max delay after the first.
func (s *Server) debounceLoop(ctx context.Context) {
	batch := debounce.NewTimer(debounce.Policy{Quiet: s.opts.debounce, MaxDelay: s.opts.maxDelay})
	defer batch.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
			batch.Add()
		case <-batch.C():
			batch.Done()
			s.pushDirty()
		}
	}
}

// pushDirty notifies every stream of the changed names it subscribes to,
// and returns how many streams it woke and how many of those had not yet
// taken their previous wake-up.
func (s *Server) pushDirty() (woken, behind int) {
	start := time.Now()
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = map[string]map[string]struct{}{}
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	if len(dirty) == 0 {
		return 0, 0
	}
	n := 0
	for _, names := range dirty {
		n += len(names)
	}
	for _, c := range conns {
		w, b := c.notify(dirty)
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
