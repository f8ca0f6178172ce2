package debounce

import (
	"testing"
	"time"
)

func TestPolicyWait(t *testing.T) {
	ms := time.Millisecond
	first := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy Policy
		since  time.Duration // from the first event to now
		want   time.Duration
	}{
		{"first event waits the quiet period", Policy{Quiet: 100 * ms, MaxDelay: time.Second}, 0, 100 * ms},
		{"a later event waits it again", Policy{Quiet: 100 * ms, MaxDelay: time.Second}, 500 * ms, 100 * ms},
		{"near the cap the wait shortens", Policy{Quiet: 100 * ms, MaxDelay: time.Second}, 950 * ms, 50 * ms},
		{"at the cap it is due", Policy{Quiet: 100 * ms, MaxDelay: time.Second}, time.Second, 0},
		{"past the cap it is due, not negative", Policy{Quiet: 100 * ms, MaxDelay: time.Second}, 2 * time.Second, 0},
		{"a cap below quiet shortens the first wait", Policy{Quiet: 100 * ms, MaxDelay: 30 * ms}, 0, 30 * ms},
		{"no quiet period: due at once", Policy{Quiet: 0, MaxDelay: time.Second}, 0, 0},
		{"negative quiet period: due at once", Policy{Quiet: -ms, MaxDelay: time.Second}, 0, 0},
		{"no cap: due at once", Policy{Quiet: 100 * ms, MaxDelay: 0}, 0, 0},
		{"zero policy: due at once", Policy{}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Wait(first, first.Add(tc.since)); got != tc.want {
				t.Errorf("%+v.Wait(first, first+%s) = %s, want %s", tc.policy, tc.since, got, tc.want)
			}
		})
	}
}
