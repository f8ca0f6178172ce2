package krt

import (
	"sync"
	"time"
)

// readerPatience is how long a reader defers to a waiting writer before it
// goes ahead anyway.
const readerPatience = time.Millisecond

// commitLock is a readers/writer lock that lets a reader take the lock
// again while holding it: Graph.Read relies on that to run Get and List
// inside one consistent view. With sync.RWMutex such a nested read would
// deadlock behind a waiting writer; with a purely reader-preferring lock a
// stream of readers would starve writers. Here a new reader defers to a
// waiting writer for at most readerPatience, then proceeds: readers that
// are not nested drain within that time and let the writer in, and a
// nested reader is delayed by at most readerPatience.
type commitLock struct {
	mu      sync.Mutex
	cond    sync.Cond // signals writers when readers drop to zero or a writer leaves
	readers int
	writing bool
	writers int           // waiting writers
	turn    chan struct{} // non-nil while a writer waits or writes; closed when none is left
}

func (l *commitLock) init() { l.cond.L = &l.mu }

func (l *commitLock) rlock() {
	l.mu.Lock()
	patient := true
	for l.turn != nil && (l.writing || patient) {
		turn := l.turn
		writing := l.writing
		l.mu.Unlock()
		if writing {
			checkReadWouldDeadlock()
			<-turn
		} else {
			t := time.NewTimer(readerPatience)
			select {
			case <-turn:
			case <-t.C:
				patient = false
			}
			t.Stop()
		}
		l.mu.Lock()
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
	if l.writing || l.readers > 0 {
		l.mu.Unlock()
		checkWriteWouldDeadlock() // before waiting for a lock this goroutine may hold
		l.mu.Lock()
	}
	if l.turn == nil {
		l.turn = make(chan struct{})
	}
	l.writers++
	for l.writing || l.readers > 0 {
		l.cond.Wait()
	}
	l.writers--
	l.writing = true
	l.mu.Unlock()
}

func (l *commitLock) unlock() {
	l.mu.Lock()
	l.writing = false
	if l.writers == 0 {
		close(l.turn)
		l.turn = nil
	}
	l.cond.Broadcast()
	l.mu.Unlock()
}
