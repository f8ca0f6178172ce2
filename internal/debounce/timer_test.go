package debounce

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshd/meshd/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// fired reports whether t's batch is due, without waiting. Inside a
// synctest bubble time stands still, so this is exact.
func fired(t *Timer) bool {
	select {
	case <-t.C():
		return true
	default:
		return false
	}
}

func TestTimerClosedHasNoChannel(t *testing.T) {
	tm := NewTimer(Policy{Quiet: time.Millisecond, MaxDelay: time.Second})
	if tm.C() != nil {
		t.Fatal("C() of a new Timer is not nil")
	}
	tm.Add()
	tm.Done()
	if tm.C() != nil {
		t.Fatal("C() after Done is not nil")
	}
}

// TestTimerQuietPeriod: a burst closer than the quiet period is one batch,
// due one quiet period after its last event.
func TestTimerQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewTimer(Policy{Quiet: 100 * time.Millisecond, MaxDelay: 10 * time.Second})
		start := time.Now()
		for range 5 {
			tm.Add()
			time.Sleep(60 * time.Millisecond)
			if fired(tm) {
				t.Fatalf("fired %s after start, inside the burst", time.Since(start))
			}
		}
		<-tm.C()
		tm.Done()
		// The last Add came at 4*60ms; due 100ms later.
		if got, want := time.Since(start), 340*time.Millisecond; got != want {
			t.Errorf("fired %s after start, want %s", got, want)
		}
		if tm.C() != nil {
			t.Error("C() after Done is not nil")
		}
	})
}

// TestTimerMaxDelay: events that never pause for the quiet period are
// still handed on at the maximum delay after the first of each batch.
func TestTimerMaxDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewTimer(Policy{Quiet: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond})
		start := time.Now()
		var fires []time.Duration
		for range 100 { // an event every 10ms for a second
			tm.Add()
			time.Sleep(10 * time.Millisecond)
			if fired(tm) {
				tm.Done()
				fires = append(fires, time.Since(start))
			}
		}
		// Batches open at 0 and at 500ms (the first Add after a fire).
		want := []time.Duration{500 * time.Millisecond, time.Second}
		if len(fires) != len(want) || fires[0] != want[0] || fires[1] != want[1] {
			t.Errorf("fired at %v, want %v", fires, want)
		}
	})
}

// TestTimerDoneDropsBatch: after Done, the old batch never fires and the
// next Add starts a new one, with a fresh maximum delay.
func TestTimerDoneDropsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewTimer(Policy{Quiet: 100 * time.Millisecond, MaxDelay: 150 * time.Millisecond})
		tm.Add()
		time.Sleep(120 * time.Millisecond)
		tm.Done()
		time.Sleep(time.Second)
		start := time.Now()
		tm.Add()
		<-tm.C()
		if got := time.Since(start); got != 100*time.Millisecond {
			t.Errorf("new batch fired after %s, want the quiet period 100ms", got)
		}
	})
}

// TestTimerZeroPolicy: with no quiet period each event is due at once.
func TestTimerZeroPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewTimer(Policy{})
		start := time.Now()
		tm.Add()
		<-tm.C()
		tm.Done()
		if got := time.Since(start); got != 0 {
			t.Errorf("fired after %s, want at once", got)
		}
	})
}
