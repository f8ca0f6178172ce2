package kubetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CacheDir returns the cache of the kube build: $MESHD_KUBE_CACHE, else
// $XDG_CACHE_HOME/meshd-kube, else ~/.cache/meshd-kube, as
// .ci/kube-testenv.sh has it.
func CacheDir() string {
	if d := os.Getenv("MESHD_KUBE_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "meshd-kube")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "meshd-kube")
}

// BinDir returns where the binaries are looked for and built:
// $MESHD_KUBE_BIN, else CacheDir()/bin.
func BinDir() string {
	if d := os.Getenv("MESHD_KUBE_BIN"); d != "" {
		return d
	}
	return filepath.Join(CacheDir(), "bin")
}

// installed reports whether both binaries are in bin.
func installed(bin string) bool {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if info, err := os.Stat(filepath.Join(bin, b)); err != nil || info.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// buildMargin is the time a package keeps, after the longest wait for a
// build, for its tests, cleanups and leak check before go test's -timeout.
const buildMargin = time.Minute

// install is the process's one attempt at the binaries: a test binary is
// one package, and every test of it gets the same outcome.
var install struct {
	once sync.Once
	err  error
}

// Need makes sure etcd and kube-apiserver are installed, building them on
// first use (see the package doc), before t uses them. It skips t with
// -short, or when there is no build script to build them with, and fails
// t when the build fails or cannot finish before the package's -timeout.
func Need(t testing.TB) {
	t.Helper()
	if testing.Short() {
		skip(t, "-short skips them")
	}
	install.once.Do(func() {
		ctx, cancel := buildContext(t)
		defer cancel()
		install.err = newInstaller(notices()).ensure(ctx)
	})
	if errors.Is(install.err, errNoScript) {
		skip(t, install.err.Error())
	}
	if install.err != nil {
		t.Fatal(install.err)
	}
}

// buildContext ends buildMargin before t's deadline (go test -timeout),
// if it has one.
func buildContext(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			return context.WithDeadline(context.Background(), deadline.Add(-buildMargin))
		}
	}
	return context.WithCancel(context.Background())
}

// installer brings the binaries into bin, building them with build while
// it holds the cache's lock.
type installer struct {
	cache, bin string
	build      func(ctx context.Context, out io.Writer) error
	out        io.Writer     // progress, for people
	poll       time.Duration // how often a held lock is tried again
	tick       time.Duration // how often a running build says so
}

func newInstaller(out io.Writer) *installer {
	in := &installer{cache: CacheDir(), bin: BinDir(), out: out, poll: time.Second, tick: 30 * time.Second}
	in.build = func(ctx context.Context, out io.Writer) error { return runBuildScript(ctx, in.cache, in.bin, out) }
	return in
}

// ensure returns once the binaries are installed: at once if they are,
// else after building them or waiting for whoever builds them.
func (in *installer) ensure(ctx context.Context) error {
	if installed(in.bin) {
		return nil
	}
	if err := os.MkdirAll(in.cache, 0o755); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	start := time.Now()
	lock, err := lockFile(ctx, filepath.Join(in.cache, "build.lock"), in.poll, func() {
		in.say("waiting for the build of kube-apiserver and etcd that another test package runs (log in %s)", in.cache)
	})
	if err != nil {
		return in.failed(ctx, start, err)
	}
	defer lock.unlock()
	if installed(in.bin) {
		return nil // built while this package waited
	}
	in.say("kube-apiserver and etcd are not in %s: building them once, for this and later runs "+
		"(about 7 min on 2 idle cores when cold, longer on a busy machine)%s", in.bin, timeLeft(ctx))
	stop := in.ticking(ctx, start)
	err = in.build(ctx, in.out)
	stop()
	if err == nil && !installed(in.bin) {
		err = fmt.Errorf("the build ended without installing both binaries in %s", in.bin)
	}
	if err != nil {
		return in.failed(ctx, start, err)
	}
	in.say("built kube-apiserver and etcd in %v", time.Since(start).Round(time.Second))
	return nil
}

// failed explains err, a build or a wait that did not end well.
func (in *installer) failed(ctx context.Context, start time.Time, err error) error {
	if ctx.Err() == nil || errors.Is(err, errNoScript) {
		return fmt.Errorf("kubetest: building kube-apiserver and etcd: %w", err)
	}
	return fmt.Errorf("kubetest: kube-apiserver and etcd are not built yet, and this package's time (go test -timeout %s) "+
		"ran out after %v of building or waiting: run go test again (the build resumes from Go's build cache), "+
		"run .ci/kube-testenv.sh build once, or give go test -timeout 30m",
		testTimeout(), time.Since(start).Round(time.Second))
}

// ticking says every tick that the build still runs, until stop.
func (in *installer) ticking(ctx context.Context, start time.Time) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(in.tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				in.say("still building kube-apiserver and etcd (%v so far)%s", time.Since(start).Round(time.Second), timeLeft(ctx))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (in *installer) say(format string, args ...any) {
	fmt.Fprintf(in.out, "kubetest: "+format+"\n", args...)
}

// timeLeft says how long the build may take before the package's
// -timeout would cut it short, if there is a limit.
func timeLeft(ctx context.Context) string {
	if deadline, ok := ctx.Deadline(); ok {
		return fmt.Sprintf("; %v left before this package's go test -timeout %s", time.Until(deadline).Round(time.Second), testTimeout())
	}
	return ""
}

// testTimeout returns go test's -timeout of this test binary.
func testTimeout() string {
	if f := flag.Lookup("test.timeout"); f != nil {
		return f.Value.String()
	}
	return "unknown"
}
