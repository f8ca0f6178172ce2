package leakcheck

import (
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Timeout is how long goroutines are given to end before those left are
// reported as leaked.
const Timeout = 20 * time.Second

// Find returns goleak's error naming the goroutines that opts do not
// ignore, if some are still running after Timeout; nil as soon as none
// is.
func Find(opts ...goleak.Option) error {
	return find(Timeout, opts)
}

func find(timeout time.Duration, opts []goleak.Option) error {
	deadline := time.Now().Add(timeout)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// VerifyNone fails t if goroutines are left, as Find finds them.
func VerifyNone(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	if err := Find(opts...); err != nil {
		t.Error(err)
	}
}

// VerifyTestMain runs the tests of m and, if they passed, fails the
// package when goroutines are left, as Find finds them. It exits with
// the tests' status, and does not return.
func VerifyTestMain(m interface{ Run() int }, opts ...goleak.Option) {
	os.Exit(verifyTestMain(m, os.Stderr, Timeout, opts))
}

func verifyTestMain(m interface{ Run() int }, stderr io.Writer, timeout time.Duration, opts []goleak.Option) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if err := find(timeout, opts); err != nil {
		fmt.Fprintf(stderr, "leakcheck: goroutines left after the tests passed: %v\n", err)
		return 1
	}
	return 0
}
