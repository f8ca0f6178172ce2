package debugui

import (
	"sync"
	"time"

	"github.com/meshd/meshd/krt"
)

// rateWindow is the window over which a collection's event rate is
// averaged: long enough to smooth a burst, short enough that the page
// shows a change within seconds.
const rateWindow = 10 * time.Second

// rateTracker turns the graph's cumulative event counters into recent
// rates. It samples the counters whenever a summary is built (every poll
// while a stream is open) and rates each collection over the samples of the
// last window. Without a usable earlier sample it counts the collection's
// recent event records instead, which is exact while the rate stays below
// the graph's history size per window.
type rateTracker struct {
	window time.Duration // rateWindow, or a test's own

	mu      sync.Mutex
	samples []rateSample // oldest first
}

type rateSample struct {
	at     time.Time
	events map[int]uint64 // EventsEmitted by collection id
}

// observe records the counters of cols as seen at now and returns each
// collection's events per second over the last window, by collection id.
func (r *rateTracker) observe(now time.Time, cols []krt.CollectionInfo) map[int]float64 {
	cur := rateSample{at: now, events: make(map[int]uint64, len(cols))}
	for _, c := range cols {
		cur.events[c.ID] = c.EventsEmitted
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	// Keep the newest sample at or before the window's start as the
	// baseline, and everything after it.
	start := now.Add(-r.window)
	i := 0
	for i+1 < len(r.samples) && !r.samples[i+1].at.After(start) {
		i++
	}
	r.samples = r.samples[i:]

	var base *rateSample
	if len(r.samples) > 0 {
		dt := now.Sub(r.samples[0].at)
		// A baseline much older than the window would average over a
		// quiet past; one too recent would make a jumpy rate.
		if dt >= r.window/10 && dt <= 2*r.window {
			base = &r.samples[0]
		}
	}
	rates := make(map[int]float64, len(cols))
	for _, c := range cols {
		if b, ok := base.lookup(c.ID); ok && c.EventsEmitted >= b {
			rates[c.ID] = float64(c.EventsEmitted-b) / now.Sub(base.at).Seconds()
			continue
		}
		n := 0
		for _, e := range c.RecentEvents {
			if e.Time.After(start) {
				n++
			}
		}
		rates[c.ID] = float64(n) / r.window.Seconds()
	}

	// Thin the samples: at most about 40 per window are kept.
	if len(r.samples) == 0 || now.Sub(r.samples[len(r.samples)-1].at) >= r.window/40 {
		r.samples = append(r.samples, cur)
	}
	return rates
}

func (s *rateSample) lookup(id int) (uint64, bool) {
	if s == nil {
		return 0, false
	}
	n, ok := s.events[id]
	return n, ok
}
