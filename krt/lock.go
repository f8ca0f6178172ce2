package krt

import "time"

// writeLock serializes the graph's writers: transactions, constructors,
// NewIndex and Register. Readers never take it: they read the committed
// version beside the writer (see snapshot.go). It is a channel rather
// than a sync.Mutex so that Explain, which reads the writer's
// bookkeeping, can give up after a while instead of hanging behind a
// transformation that blocks.
type writeLock struct{ ch chan struct{} }

func (l *writeLock) init() { l.ch = make(chan struct{}, 1) }

// lock takes the lock. A goroutine that would wait for it first checks
// that it does not hold it itself (see misuse.go).
func (l *writeLock) lock() {
	select {
	case l.ch <- struct{}{}:
		return
	default:
	}
	checkWriteWouldDeadlock()
	l.ch <- struct{}{}
}

func (l *writeLock) unlock() { <-l.ch }

// lockWithin takes the lock if it can within d, and reports whether it did.
func (l *writeLock) lockWithin(d time.Duration) bool {
	select {
	case l.ch <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l.ch <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}
