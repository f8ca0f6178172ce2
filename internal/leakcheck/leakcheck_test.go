package leakcheck

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain checks this package with itself.
func TestMain(m *testing.M) { VerifyTestMain(m) }

// A goroutine that ends later than goleak's own retries would wait is
// not a leak.
func TestFindWaitsForAnEndingGoroutine(t *testing.T) {
	release := make(chan struct{})
	go func() { <-release }()
	time.AfterFunc(time.Second, func() { close(release) })
	if err := goleak.Find(); err == nil {
		t.Fatal("goleak found no goroutine while one was blocked")
	}
	start := time.Now()
	if err := Find(); err != nil {
		t.Fatalf("Find: %v", err)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("Find returned after %v, before the goroutine ended", d)
	}
}

// A goroutine still running after the timeout is reported, by its stack.
func TestFindReportsAStuckGoroutine(t *testing.T) {
	release := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); stuckForLeakTest(release) }()
	defer func() { close(release); <-done }()
	err := find(200*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "stuckForLeakTest") {
		t.Fatalf("find: %v, want the stuck goroutine named", err)
	}
	if err := find(200*time.Millisecond, []goleak.Option{goleak.IgnoreCurrent()}); err != nil {
		t.Fatalf("find ignoring the current goroutines: %v", err)
	}
}

//go:noinline
func stuckForLeakTest(release <-chan struct{}) { <-release }

// fakeM stands for testing.M: its tests end with code and leave a
// goroutine running until release closes.
type fakeM struct {
	code    int
	release chan struct{}
	done    chan struct{}
}

func (m *fakeM) Run() int {
	go func() { defer close(m.done); stuckForLeakTest(m.release) }()
	return m.code
}

func TestVerifyTestMain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		want     int
		reported bool
	}{
		{"passed with a leak", 0, 1, true},
		{"failed: the failure is what counts", 3, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeM{code: tc.code, release: make(chan struct{}), done: make(chan struct{})}
			defer func() { close(m.release); <-m.done }()
			var stderr strings.Builder
			got := verifyTestMain(m, &stderr, 200*time.Millisecond, []goleak.Option{goleak.IgnoreCurrent()})
			if got != tc.want || strings.Contains(stderr.String(), "stuckForLeakTest") != tc.reported {
				t.Errorf("exit code %d, stderr %q; want %d, reported %v", got, stderr.String(), tc.want, tc.reported)
			}
		})
	}
}
