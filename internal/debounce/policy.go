package debounce

import "time"

// Policy says when a batch of events is due.
//
// Quiet is how long the batch waits after an event for another; zero or
// less makes every batch due at its first event. MaxDelay caps how long
// the batch may wait after its first event; a MaxDelay below Quiet shortens
// every wait to it, and zero or less also makes every batch due at once.
// The zero Policy thus hands on every event as it comes.
type Policy struct {
	Quiet    time.Duration
	MaxDelay time.Duration
}

// Wait returns how long after now a batch whose first event came at first
// and whose latest came at now is due; never negative.
func (p Policy) Wait(first, now time.Time) time.Duration {
	return max(0, min(p.Quiet, first.Add(p.MaxDelay).Sub(now)))
}
