package kubetest

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// notices returns where kubetest writes what a person should see: stderr,
// and also the terminal unless -v is given, because go test shows the
// output of a package that passes only with -v (in CI, which has no
// terminal, stderr alone).
func notices() io.Writer {
	if v := flag.Lookup("test.v"); v != nil && v.Value.String() != "false" {
		return os.Stderr
	}
	return ttyAndStderr{}
}

// ttyAndStderr writes to stderr and, when there is one, the controlling
// terminal.
type ttyAndStderr struct{}

func (ttyAndStderr) Write(p []byte) (int, error) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		tty.Write(p)
		tty.Close()
	}
	return os.Stderr.Write(p)
}

// skipped lists the tests kubetest skipped in this test binary, with why.
var skipped struct {
	mu      sync.Mutex
	reasons map[string]int // reason → tests
	total   int
}

// skip records t as skipped for reason and skips it.
func skip(t testing.TB, reason string) {
	t.Helper()
	skipped.mu.Lock()
	if skipped.reasons == nil {
		skipped.reasons = map[string]int{}
	}
	skipped.reasons[reason]++
	skipped.total++
	skipped.mu.Unlock()
	t.Skipf("skipping a test that needs kube-apiserver and etcd: %s", reason)
}

// ReportSkips returns m with a line written after its tests when kubetest
// skipped some (with -short, say), naming how many, in which package, and
// why, where a person sees it without -v (see notices). Shared.Around
// includes it; a package that starts its servers with Start wraps its
// TestMain's m with it.
func ReportSkips(m interface{ Run() int }) interface{ Run() int } {
	return reporting{m, notices()}
}

type reporting struct {
	m   interface{ Run() int }
	out io.Writer
}

func (r reporting) Run() int {
	code := r.m.Run()
	if line := skipSummary(packageName()); line != "" {
		fmt.Fprintln(r.out, line)
	}
	return code
}

// skipSummary returns the line about the tests skipped so far in pkg, or
// "" if none were.
func skipSummary(pkg string) string {
	skipped.mu.Lock()
	defer skipped.mu.Unlock()
	if skipped.total == 0 {
		return ""
	}
	why := slices.Sorted(maps.Keys(skipped.reasons))
	tests := "tests that need"
	if skipped.total == 1 {
		tests = "test that needs"
	}
	return fmt.Sprintf("kubetest: %s: skipped %d %s kube-apiserver and etcd: %s",
		pkg, skipped.total, tests, strings.Join(why, "; "))
}

// packageName names the package under test by its directory, the test
// binary's working directory, relative to the repository when possible.
func packageName() string {
	wd, err := os.Getwd()
	if err != nil {
		return "this package"
	}
	if root, err := repoRoot(wd); err == nil {
		if rel, err := filepath.Rel(root, wd); err == nil {
			return "./" + filepath.ToSlash(rel)
		}
	}
	return wd
}
