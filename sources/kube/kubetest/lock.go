package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLock is an exclusive flock(2) on a file: held by one open file at a
// time, across processes (the test binaries go test runs side by side)
// and within one. The kernel releases it when its holder exits, so a
// crashed build leaves no stale lock.
type fileLock struct{ f *os.File }

// lockFile takes the lock on path, creating the file if needed. While
// another holds it, waiting is called once and the lock is tried again
// every poll until ctx ends.
func lockFile(ctx context.Context, path string, poll time.Duration, waiting func()) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("build lock: %w", err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &fileLock{f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("build lock %s: %w", path, err)
		}
		if !told {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// unlock releases the lock.
func (l *fileLock) unlock() { l.f.Close() }
