package testrun_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
)

func TestGoRunsUntilTheTestEnds(t *testing.T) {
	var ended atomic.Bool
	t.Run("inner", func(t *testing.T) {
		ctx := testrun.Go(t, func(ctx context.Context) error {
			<-ctx.Done()
			ended.Store(true)
			return nil
		})
		if ctx.Err() != nil || ended.Load() {
			t.Fatal("run ended before the test")
		}
	})
	if !ended.Load() {
		t.Error("run still going after its test ended")
	}
}

// recorder is a testing.TB that records Errorf.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Errorf(string, ...any) { r.errors++ }

func TestGoReportsRunsError(t *testing.T) {
	var rec *recorder
	t.Run("inner", func(t *testing.T) {
		rec = &recorder{TB: t}
		testrun.Go(rec, func(ctx context.Context) error {
			<-ctx.Done()
			return errors.New("stopped badly")
		})
	})
	if rec.errors != 1 {
		t.Errorf("%d errors reported, want 1 for the error Run returned", rec.errors)
	}
}

func TestPoll(t *testing.T) {
	calls := 0
	if !testrun.Poll(time.Second, time.Millisecond, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Poll of a condition true on the third call: %d calls", calls)
	}
	start := time.Now()
	if testrun.Poll(20*time.Millisecond, time.Millisecond, func() bool { return false }) {
		t.Error("Poll of a condition never true reported true")
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("Poll gave up after %v, before its timeout", d)
	}
}

func TestBufferSharedWrites(t *testing.T) {
	var b testrun.Buffer
	done := make(chan struct{})
	for range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				if _, err := b.Write([]byte("x")); err != nil {
					t.Error(err)
				}
				_ = b.String()
			}
		}()
	}
	<-done
	<-done
	if got := len(b.String()); got != 200 {
		t.Errorf("%d bytes after 200 one-byte writes", got)
	}
}
