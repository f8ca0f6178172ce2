package krt_test

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// krt's own leak check: its go.mod requires nothing, tests included, so
// it reads runtime.Stack instead of using a leak-checking library.

// leakedGoroutines waits up to timeout for every goroutine but the
// caller's, and those the runtime and testing packages keep, to end, and
// returns the stacks of those still running then. Goroutines that are
// ending need a moment to go, hence the retries.
func leakedGoroutines(timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		leaked := otherGoroutines()
		if len(leaked) == 0 || time.Now().After(deadline) {
			return leaked
		}
		time.Sleep(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// otherGoroutines returns the stack of every goroutine except the
// caller's and the ones that are not the tests' doing.
func otherGoroutines() []string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The caller's goroutine comes first; stacks are separated by a blank
	// line.
	stacks := strings.Split(strings.TrimSpace(string(buf)), "\n\n")[1:]
	return slices.DeleteFunc(stacks, notTheTests)
}

// notTheTests reports whether stack belongs to a goroutine the Go runtime
// or the testing package runs for itself: signal handling (started by
// fuzzing and by -timeout), and the -trace and -cpuprofile writers.
func notTheTests(stack string) bool {
	for _, fn := range []string{
		"os/signal.signal_recv",
		"os/signal.loop",
		"runtime.ensureSigM",
		"runtime/trace.Start",
		"runtime/pprof.profileWriter",
	} {
		if strings.Contains(stack, "\n"+fn+"(") || strings.Contains(stack, "\n"+fn+".") {
			return true
		}
	}
	return false
}

func TestLeakCheckFindsABlockedGoroutine(t *testing.T) {
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		blockedForLeakTest(started, release)
	}()
	<-started // a goroutine not yet running has not entered the function
	found := func(timeout time.Duration) bool {
		return slices.ContainsFunc(leakedGoroutines(timeout), func(s string) bool {
			return strings.Contains(s, "blockedForLeakTest")
		})
	}
	if !found(10 * time.Millisecond) {
		t.Fatal("a goroutine blocked on a channel is not reported")
	}
	close(release)
	<-done
	if found(5 * time.Second) {
		t.Fatal("a goroutine that has returned is still reported")
	}
}

//go:noinline
func blockedForLeakTest(started chan<- struct{}, release <-chan struct{}) {
	close(started)
	<-release
}
