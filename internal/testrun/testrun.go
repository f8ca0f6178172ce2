package testrun

import (
	"bytes"
	"context"
	"sync"
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

// Buffer collects what a component writes (its log, a child process's
// output) for the test to read while it runs: its methods are safe to call
// at once. The zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
