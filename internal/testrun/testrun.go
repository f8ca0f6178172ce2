package testrun

import (
	"context"
	"testing"
	"time"
)

// Go calls run in a goroutine with a context that ends when the test does:
// a cleanup cancels it, waits for run to return and fails t if run
// returned an error. It returns that context, for waits that should end
// with the test.
func Go(t testing.TB, run func(ctx context.Context) error) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return ctx
}

// Poll calls cond every interval until it holds, and reports whether it
// did within timeout.
func Poll(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}
