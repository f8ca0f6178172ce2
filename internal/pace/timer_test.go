package pace

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshd/meshd/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

func TestTimerIdleHasNoChannel(t *testing.T) {
	tm := NewTimer(Policy{Window: time.Millisecond})
	defer tm.Stop()
	if tm.C() != nil {
		t.Fatal("C() of a new Timer is not nil")
	}
	tm.Change()
	<-tm.C()
	tm.Ran(Round{Woken: 1})
	if tm.C() != nil {
		t.Fatal("C() after Ran is not nil")
	}
}

// TestTimerSustainedChanges: changes every 10ms for a second, the rounds
// come once per window, the first at once, each change within a window
// of its round.
func TestTimerSustainedChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		window := 100 * time.Millisecond
		tm := NewTimer(Policy{Window: window, MaxWindow: time.Second})
		defer tm.Stop()
		start := time.Now()
		var rounds []time.Duration
		var oldest time.Time // the oldest change not yet in a round
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for time.Since(start) < time.Second {
			select {
			case <-tick.C:
				if oldest.IsZero() {
					oldest = time.Now()
				}
				tm.Change()
			case <-tm.C():
				if waited := time.Since(oldest); waited > window {
					t.Errorf("a change waited %v for its round, over the window", waited)
				}
				rounds = append(rounds, time.Since(start))
				oldest = time.Time{}
				tm.Ran(Round{Woken: 1})
			}
		}
		if len(rounds) < 9 || len(rounds) > 11 {
			t.Fatalf("%d rounds in a second of changes every 10ms, want 10 (one per window): %v", len(rounds), rounds)
		}
		if rounds[0] != 10*time.Millisecond {
			t.Errorf("first round at %v, want at the first change (10ms)", rounds[0])
		}
		for i := 1; i < len(rounds); i++ {
			if gap := rounds[i] - rounds[i-1]; gap < window {
				t.Errorf("rounds %d and %d %v apart, under the window", i-1, i, gap)
			}
		}
	})
}

// TestTimerBacksOff: while the receivers are behind, rounds come less
// often; once they keep up, as often as before.
func TestTimerBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := NewTimer(Policy{Window: 100 * time.Millisecond, MaxWindow: 400 * time.Millisecond})
		defer tm.Stop()
		gap := func(behind int) time.Duration {
			tm.Change()
			start := time.Now()
			<-tm.C()
			tm.Ran(Round{Woken: 10, Behind: behind})
			return time.Since(start)
		}
		gap(0)
		got := []time.Duration{gap(10), gap(10), gap(10), gap(10), gap(0), gap(0), gap(0)}
		ms := time.Millisecond
		want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 400 * ms, 400 * ms, 200 * ms, 100 * ms}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("gaps between rounds %v, want %v", got, want)
			}
		}
	})
}
