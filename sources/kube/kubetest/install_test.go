package kubetest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
)

func TestCacheAndBinDir(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		name, cache, bin, xdg string
		wantCache, wantBin    string
	}{
		{name: "defaults", wantCache: filepath.Join(home, ".cache", "meshd-kube"), wantBin: filepath.Join(home, ".cache", "meshd-kube", "bin")},
		{name: "XDG_CACHE_HOME", xdg: "/x", wantCache: "/x/meshd-kube", wantBin: "/x/meshd-kube/bin"},
		{name: "MESHD_KUBE_CACHE", cache: "/c", xdg: "/x", wantCache: "/c", wantBin: "/c/bin"},
		{name: "MESHD_KUBE_BIN", cache: "/c", bin: "/b", wantCache: "/c", wantBin: "/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MESHD_KUBE_CACHE", tc.cache)
			t.Setenv("MESHD_KUBE_BIN", tc.bin)
			t.Setenv("XDG_CACHE_HOME", tc.xdg)
			if got := CacheDir(); got != tc.wantCache {
				t.Errorf("CacheDir = %s, want %s", got, tc.wantCache)
			}
			if got := BinDir(); got != tc.wantBin {
				t.Errorf("BinDir = %s, want %s", got, tc.wantBin)
			}
		})
	}
}

// fakeBinaries writes executable stand-ins for etcd and kube-apiserver.
func fakeBinaries(bin string) error {
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// testInstaller is an installer on a temporary cache whose build runs
// build; its progress goes to out.
func testInstaller(t *testing.T, cache string, out *testrun.Buffer, build func(ctx context.Context) error) *installer {
	t.Helper()
	return &installer{cache: cache, bin: filepath.Join(cache, "bin"), out: out,
		poll: 10 * time.Millisecond, tick: time.Hour,
		build: func(ctx context.Context, _ io.Writer) error { return build(ctx) }}
}

func TestEnsureInstalledBuildsNothing(t *testing.T) {
	cache := t.TempDir()
	if err := fakeBinaries(filepath.Join(cache, "bin")); err != nil {
		t.Fatal(err)
	}
	var out testrun.Buffer
	in := testInstaller(t, cache, &out, func(context.Context) error { return errors.New("built") })
	if err := in.ensure(t.Context()); err != nil || out.String() != "" {
		t.Fatalf("ensure = %v, said %q; want nothing done", err, out.String())
	}
}

// Two test packages needing the binaries at once: the second waits for
// the first's build, says so, and builds nothing.
func TestEnsureBuildsOnceForTwoPackages(t *testing.T) {
	cache := t.TempDir()
	var builds atomic.Int32
	started, release := make(chan struct{}), make(chan struct{})
	build := func(context.Context) error {
		builds.Add(1)
		close(started)
		<-release
		return fakeBinaries(filepath.Join(cache, "bin"))
	}
	var first, second testrun.Buffer
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs <- testInstaller(t, cache, &first, build).ensure(t.Context()) })
	<-started
	wg.Go(func() { errs <- testInstaller(t, cache, &second, build).ensure(t.Context()) })
	if !testrun.Poll(10*time.Second, 5*time.Millisecond, func() bool { return strings.Contains(second.String(), "waiting for the build") }) {
		t.Fatalf("the second package did not say it waits; it said %q", second.String())
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
	for _, want := range []string{"building them once", "built kube-apiserver and etcd in"} {
		if !strings.Contains(first.String(), want) {
			t.Errorf("the building package said %q, want %q in it", first.String(), want)
		}
	}
}

// A build that would outlast the package's time is stopped before it,
// and the error says what to do.
func TestEnsureStopsBeforeTheTimeout(t *testing.T) {
	var out testrun.Buffer
	stopped := make(chan struct{})
	in := testInstaller(t, t.TempDir(), &out, func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return ctx.Err()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	err := in.ensure(ctx)
	<-stopped
	for _, want := range []string{"-timeout", "run go test again", ".ci/kube-testenv.sh build", "-timeout 30m"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ensure = %v, want it to say %q", err, want)
		}
	}
	if !strings.Contains(out.String(), "left before this package's go test -timeout") {
		t.Errorf("progress %q does not say how long the build may take", out.String())
	}
}

// Waiting for another package's build ends before the timeout too.
func TestEnsureWaitStopsBeforeTheTimeout(t *testing.T) {
	cache := t.TempDir()
	held, err := lockFile(t.Context(), filepath.Join(cache, "build.lock"), time.Millisecond, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer held.unlock()
	var out testrun.Buffer
	in := testInstaller(t, cache, &out, func(context.Context) error { return errors.New("built while locked") })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := in.ensure(ctx); err == nil || !strings.Contains(err.Error(), "ran out") {
		t.Errorf("ensure = %v, want the time that ran out named", err)
	}
	if !strings.Contains(out.String(), "waiting for the build") {
		t.Errorf("progress %q does not say it waits", out.String())
	}
}

func TestEnsureReportsAFailedBuild(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(context.Context) error
		want  string
	}{
		{"script failed", func(context.Context) error { return errors.New("go: no space left on device") }, "no space left"},
		{"nothing installed", func(context.Context) error { return nil }, "without installing both binaries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out testrun.Buffer
			err := testInstaller(t, t.TempDir(), &out, tc.build).ensure(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ensure = %v, want %q", err, tc.want)
			}
		})
	}
}
