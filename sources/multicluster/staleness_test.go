package multicluster

import (
	"errors"
	"testing"
	"time"
)

var errDown = errors.New("connection refused")

func TestStalePolicyJudge(t *testing.T) {
	p := stalePolicy{failures: 3, grace: 10 * time.Second, timeout: time.Minute}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	failing := func(ago time.Duration, errs uint64) HealthSnapshot {
		return HealthSnapshot{FailingSince: now.Add(-ago), ConsecutiveErrors: errs, Errors: errs + 40}
	}
	tests := []struct {
		name   string
		policy stalePolicy
		health HealthSnapshot
		want   verdict
	}{
		{"answering", p, HealthSnapshot{Errors: 40}, serving},
		{"answering after an outage", p, HealthSnapshot{Errors: 400, LastErrorAt: now.Add(-time.Second)}, serving},
		{"one failed request", p, failing(0, 1), serving},
		{"one failed request long ago, none since", p, failing(30*time.Second, 1), serving},
		{"many failures within the grace", p, failing(9*time.Second, 50), serving},
		{"just under the grace", p, failing(10*time.Second-time.Nanosecond, 3), serving},
		{"enough failures at the grace", p, failing(10*time.Second, 3), stale},
		{"sustained outage", p, failing(30*time.Second, 12), stale},
		{"two failures past the grace", p, failing(30*time.Second, 2), serving},
		{"just under the timeout", p, failing(time.Minute-time.Nanosecond, 12), stale},
		{"at the timeout", p, failing(time.Minute, 12), expired},
		{"past the timeout with too few failures", p, failing(2*time.Minute, 2), serving},
		{"no grace: the first failure", stalePolicy{failures: 1, timeout: time.Minute}, failing(0, 1), stale},
		{"grace past the timeout: expired at the grace",
			stalePolicy{failures: 1, grace: 2 * time.Minute, timeout: time.Minute}, failing(2*time.Minute, 5), expired},
		{"grace past the timeout: serving before it",
			stalePolicy{failures: 1, grace: 2 * time.Minute, timeout: time.Minute}, failing(90*time.Second, 5), serving},
		{"clock behind the first failure", p, failing(-time.Second, 5), serving},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.judge(tc.health, now); got != tc.want {
				t.Errorf("judge(%+v) = %v, want %v", tc.health, got, tc.want)
			}
		})
	}
}

// TestStalePolicyFlapping feeds the policy the health of a remote that
// fails for a few seconds and answers again, over and over: it is never
// flagged, however many requests fail in all, while the same failures
// without the successes in between flag it.
func TestStalePolicyFlapping(t *testing.T) {
	p := stalePolicy{failures: 3, grace: 10 * time.Second, timeout: time.Minute}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var flapping, down Health
	var flappingNow time.Time
	flapping.now = func() time.Time { return flappingNow }
	down.now = flapping.now
	flagged := false
	for sec := range 120 {
		flappingNow = start.Add(time.Duration(sec) * time.Second)
		down.failure(errDown)
		if sec%8 < 6 { // six seconds down, two up
			flapping.failure(errDown)
		} else {
			flapping.success(true, true)
		}
		if v := p.judge(flapping.Snapshot(), flappingNow); v != serving {
			t.Fatalf("second %d: flapping remote judged %v, want serving", sec, v)
		}
		flagged = flagged || p.judge(down.Snapshot(), flappingNow) == stale
	}
	if !flagged {
		t.Errorf("a remote down for 120 s was never judged stale")
	}
	if v := p.judge(down.Snapshot(), flappingNow); v != expired {
		t.Errorf("a remote down for 120 s judged %v at the end, want expired", v)
	}
	if h := flapping.Snapshot(); h.Errors < 80 || h.ConsecutiveErrors != 0 {
		t.Errorf("flapping health = %+v, want many errors and none since the last success", h)
	}
}
