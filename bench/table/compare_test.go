package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compareDry runs ../compare.sh with DRYRUN=1, which prints each build and
// run instead of doing it, with env and args; it returns the lines
// printed, stderr and the exit code.
func compareDry(t *testing.T, env []string, args ...string) (lines []string, stderr string, code int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run compare.sh")
	}
	dir := t.TempDir()
	cmd := exec.Command(bash, append([]string{"../compare.sh"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"DRYRUN=1", "BIN=" + filepath.Join(dir, "bin"), "OUT=" + filepath.Join(dir, "out")}, env...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("compare.sh: %v", err)
	}
	bin := filepath.Join(dir, "bin")
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, strings.ReplaceAll(l, bin, "BIN"))
		}
	}
	return lines, errb.String(), code
}

// runs returns the "run" lines, in order.
func runs(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "run ") {
			out = append(out, l)
		}
	}
	return out
}

// TestCompareFlags: each flag reaches the benchmarks that take it, in
// either form (-f v, -f=v).
func TestCompareFlags(t *testing.T) {
	lines, stderr, code := compareDry(t, []string{"ONLY=xds"}, "-n", "5", "-m=50", "-p", "3", "-debounce", "1s", "-versions", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := []string{
		"run sotw-1: BIN/xdsbench -n 5 -m 50 -p 3 -changes 20 -debounce 1s",
		"run delta-1: BIN/xdsbench -n 5 -m 50 -p 3 -changes 20 -debounce 1s -delta",
		"run gcp-1: BIN/gcp-snapshot -client BIN/xdsbench -n 5 -m 50 -p 3 -changes 20 -versions 2",
	}
	if got := runs(lines); !slices.Equal(got, want) {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCompareBase: with BASE the base's and this tree's benchmarks of
// meshd are built apart and run alternately, round by round, and nobody
// else's is.
func TestCompareBase(t *testing.T) {
	lines, stderr, code := compareDry(t, []string{"BASE=HEAD", "ROUNDS=2", "ONLY=krt"}, "-n", "7", "-mesh-change")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"build BIN/base/krt-bench <- <worktree of HEAD> ./bench/krt", "table -layout krt-ab -run base= -run current="} {
		if !slices.Contains(lines, want) {
			t.Errorf("no %q in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	want := []string{
		"run base-1: BIN/base/krt-bench -n 7 -mesh-change=true",
		"run current-1: BIN/krt-bench -n 7 -mesh-change=true",
		"run base-2: BIN/base/krt-bench -n 7 -mesh-change=true",
		"run current-2: BIN/krt-bench -n 7 -mesh-change=true",
	}
	if got := runs(lines); !slices.Equal(got, want) {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if lines, _, _ := compareDry(t, []string{"BASE=HEAD", "ONLY=xds"}); !slices.Contains(lines, "run base-delta-1: BIN/base/xdsbench -changes 20 -delta") {
		t.Errorf("xds against a base: no base Delta run in:\n%s", strings.Join(lines, "\n"))
	}
}

// TestCompareRefuses: bad input ends the script with status 2 and a
// message naming it, before anything is built.
func TestCompareRefuses(t *testing.T) {
	tests := []struct {
		name, want string
		env, args  []string
	}{
		{"unknown flag", "unknown flag -bogus", nil, []string{"-bogus", "1"}},
		{"flag without a value", "-p needs a value", nil, []string{"-p"}},
		{"unknown base", "BASE=no-such-revision: not a revision", []string{"BASE=no-such-revision"}, nil},
		{"unknown comparison", "ONLY=gcp: want krt or xds", []string{"ONLY=gcp"}, nil},
		{"rounds not a count", "ROUNDS=0: want a count", []string{"ROUNDS=0"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lines, stderr, code := compareDry(t, tc.env, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || len(lines) != 0 {
				t.Errorf("exit %d, stderr %q, printed %q; want exit 2 and %q, nothing printed", code, stderr, lines, tc.want)
			}
		})
	}
}
