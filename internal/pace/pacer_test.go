package pace

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPacer steps a Pacer through schedules. Each step is one of:
//
//	change           a change comes
//	at T             the time is now T ms (it starts at 1000)
//	due D            the round is due D ms from now ("due none": no change waits)
//	ran W B          a round runs now, waking W receivers, B of them behind
//	ran W B with C   the same, the round handing on C changes
//	churn R for T    changes come at R a second for T ms, each round
//	                 running as soon as it is due
//	window D         the current window is D ms ("window about D": within 2%)
//	due about D      likewise for due
func TestPacer(t *testing.T) {
	steady := Policy{Window: 100 * time.Millisecond, MaxWindow: 800 * time.Millisecond}
	churny := Policy{Window: 100 * time.Millisecond, ChurnWindow: 400 * time.Millisecond, MaxWindow: 800 * time.Millisecond}
	tests := []struct {
		name   string
		policy Policy
		steps  string
	}{
		{"nothing waits before a change", steady, "due none"},
		{"the first change goes at once", steady, "change; due 0"},
		{"a change right after a round waits for the window", steady,
			"change; ran 10 0; at 1010; change; due 90"},
		{"a burst within the window is one round", steady,
			"change; ran 10 0; at 1010; change; at 1050; change; at 1090; change; due 10; at 1100; ran 10 0; due none"},
		{"sustained churn: one round per window, never longer", steady,
			"change; ran 1 0; at 1020; change; due 80; at 1100; ran 1 0; at 1120; change; due 80; at 1200; ran 1 0; at 1230; change; due 70"},
		{"a late round does not make the next one wait", steady,
			"change; ran 1 0; at 1150; change; due 0"},
		{"after a quiet spell a change goes at once", steady,
			"change; ran 5 0; at 5000; change; due 0"},
		{"a quarter behind doubles the window", steady,
			"change; ran 8 2; window 200; at 1010; change; due 190"},
		{"fewer behind leaves it", steady,
			"change; ran 9 2; window 100"},
		{"the window doubles up to the cap", steady,
			"ran 4 4; window 200; ran 4 4; window 400; ran 4 4; window 800; ran 4 4; window 800"},
		{"keeping up halves it back to the policy's", steady,
			"ran 4 4; ran 4 4; ran 4 4; window 800; ran 4 0; window 400; ran 4 0; window 200; ran 4 0; window 100; ran 4 0; window 100"},
		{"a round that woke no one keeps up", steady, "ran 0 0; window 100"},
		{"no window: every change at once, never wider", Policy{MaxWindow: time.Second},
			"change; ran 4 4; window 0; at 1001; change; due 0"},
		{"a cap below the window is the window", Policy{Window: 100 * time.Millisecond, MaxWindow: time.Millisecond},
			"ran 4 4; window 100"},
		{"slow churn keeps the window", churny, "churn 20 for 3000; window 100"},
		{"churn at 100/s widens it to 183ms", churny, "churn 100 for 3000; window about 183"},
		{"churn at 300/s widens it to 316ms", churny, "churn 300 for 3000; window about 316"},
		{"faster churn stops at ChurnWindow", churny, "churn 3000 for 3000; window 400"},
		{"without ChurnWindow churn never widens it", steady, "churn 300 for 3000; window 100"},
		{"a change during churn waits for the wider window", churny,
			"churn 300 for 3000; change; due about 316"},
		{"the first change after a quiet spell goes at once", churny,
			"churn 300 for 3000; at 5000; change; due 0"},
		{"as the changes stop the window shrinks back", churny,
			"churn 300 for 3000; at 5000; ran 1 0 with 1; window about 158; at 6000; ran 1 0 with 1; window 100"},
		{"the first round gives no rate", churny, "ran 1 0 with 500; window 100"},
		{"behind during churn: the wider window wins", churny,
			"churn 300 for 3000; ran 4 4; window about 316; ran 4 4; window 400; ran 4 4; window 800; ran 4 0; window 400; ran 4 0; window about 316"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.policy)
			now := time.UnixMilli(1000)
			for i, step := range strings.Split(tc.steps, "; ") {
				if err := apply(p, &now, step); err != nil {
					t.Fatalf("step %d %q: %v", i+1, step, err)
				}
			}
		})
	}
}

// apply runs one step of a TestPacer schedule, returning an error when an
// expectation fails.
func apply(p *Pacer, now *time.Time, step string) error {
	var a, b, c int
	switch {
	case step == "change":
		p.Change()
	case step == "due none":
		if d, ok := p.Wait(*now); ok {
			return fmt.Errorf("due in %v, want no round owed", d)
		}
	case scan(step, "at %d", &a):
		*now = time.UnixMilli(int64(a))
	case scan(step, "due about %d", &a):
		d, ok := p.Wait(*now)
		if !ok || !about(d, a) {
			return fmt.Errorf("due in %v (owed %v), want about %dms", d, ok, a)
		}
	case scan(step, "due %d", &a):
		d, ok := p.Wait(*now)
		if want := time.Duration(a) * time.Millisecond; !ok || d != want {
			return fmt.Errorf("due in %v (owed %v), want %v", d, ok, want)
		}
	case scan(step, "ran %d %d with %d", &a, &b, &c):
		p.Ran(*now, Round{Changes: c, Woken: a, Behind: b})
	case scan(step, "ran %d %d", &a, &b):
		p.Ran(*now, Round{Woken: a, Behind: b})
	case scan(step, "churn %d for %d", &a, &b):
		churn(p, now, float64(a), time.Duration(b)*time.Millisecond)
	case scan(step, "window about %d", &a):
		if got := p.Window(); !about(got, a) {
			return fmt.Errorf("window %v, want about %dms", got, a)
		}
	case scan(step, "window %d", &a):
		if got, want := p.Window(), time.Duration(a)*time.Millisecond; got != want {
			return fmt.Errorf("window %v, want %v", got, want)
		}
	default:
		return fmt.Errorf("unknown step")
	}
	return nil
}

// churn runs rounds as soon as each is due for d, changes coming at rate
// per second meanwhile.
func churn(p *Pacer, now *time.Time, rate float64, d time.Duration) {
	start, handed := *now, 0
	for end := now.Add(d); now.Before(end); {
		*now = now.Add(p.Window())
		came := int(rate * now.Sub(start).Seconds())
		p.Change()
		p.Ran(*now, Round{Changes: came - handed})
		handed = came
	}
}

// about reports whether d is within 2% of ms milliseconds.
func about(d time.Duration, ms int) bool {
	want := float64(ms) * float64(time.Millisecond)
	return float64(d) >= 0.98*want && float64(d) <= 1.02*want
}

// scan reports whether step matches format exactly.
func scan(step, format string, args ...any) bool {
	n, err := fmt.Sscanf(step, format, args...)
	return err == nil && n == len(args)
}

func TestPolicyHold(t *testing.T) {
	ms := time.Millisecond
	sent := time.UnixMilli(1000)
	p := Policy{Window: 100 * ms, MaxWindow: time.Second, MaxHold: time.Second}
	tests := []struct {
		name       string
		policy     Policy
		unanswered bool
		since      time.Duration // from sent to now
		want       time.Duration
	}{
		{"an answered receiver is not held", p, false, 0, 0},
		{"an unanswered one waits for its answer", p, true, 10 * ms, 990 * ms},
		{"at most MaxHold after the send", p, true, time.Second, 0},
		{"past it, not negative", p, true, 3 * time.Second, 0},
		{"no MaxHold: never held", Policy{Window: 100 * ms, MaxWindow: time.Second}, true, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Hold(sent, tc.unanswered, sent.Add(tc.since)); got != tc.want {
				t.Errorf("Hold(sent, %v, sent+%v) = %v, want %v", tc.unanswered, tc.since, got, tc.want)
			}
		})
	}
}
