package krt

import "sync"

// commitLock is a reader-preferring readers/writer lock. Unlike
// sync.RWMutex, a waiting writer does not block new readers, so a reader may
// take the lock again while holding it: Graph.Read relies on that to run
// Get and List inside one consistent view. Writers can starve under a
// continuous stream of readers; reads here are short.
type commitLock struct {
	mu      sync.Mutex
	cond    sync.Cond
	readers int
	writing bool
}

func (l *commitLock) init() { l.cond.L = &l.mu }

func (l *commitLock) rlock() {
	l.mu.Lock()
	for l.writing {
		l.cond.Wait()
	}
	l.readers++
	l.mu.Unlock()
}

func (l *commitLock) runlock() {
	l.mu.Lock()
	l.readers--
	if l.readers == 0 {
		l.cond.Broadcast()
	}
	l.mu.Unlock()
}

func (l *commitLock) lock() {
	l.mu.Lock()
	for l.writing || l.readers > 0 {
		l.cond.Wait()
	}
	l.writing = true
	l.mu.Unlock()
}

func (l *commitLock) unlock() {
	l.mu.Lock()
	l.writing = false
	l.cond.Broadcast()
	l.mu.Unlock()
}
