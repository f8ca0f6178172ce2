package kubetest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
)

// fakeRepo makes a repository whose build script is script, and moves
// the test into a package directory of it, as go test runs a test binary.
func fakeRepo(t *testing.T, script string) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "sources", "kube")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, buildScript), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	return root
}

func TestRunBuildScript(t *testing.T) {
	fakeRepo(t, `set -eu
[ "$1" = build ] && [ "$MESHD_KUBE_LOCK_HELD" = 1 ]
echo "go: added go.etcd.io/etcd/server/v3 v3.7.3" >&2
echo "[kube-testenv] compiling etcd" >&2
mkdir -p "$MESHD_KUBE_BIN"
for b in etcd kube-apiserver; do printf '#!/bin/sh\n' > "$MESHD_KUBE_BIN/$b"; chmod +x "$MESHD_KUBE_BIN/$b"; done
printf 'no newline at the end'
`)
	cache := t.TempDir()
	bin := filepath.Join(cache, "bin")
	var out testrun.Buffer
	if err := runBuildScript(t.Context(), cache, bin, &out); err != nil {
		t.Fatalf("runBuildScript: %v\n%s", err, out.String())
	}
	if !installed(bin) {
		t.Error("the script's binaries are not installed")
	}
	want := "kubetest: | [kube-testenv] compiling etcd\nkubetest: | no newline at the end\n"
	if out.String() != want {
		t.Errorf("progress %q, want %q", out.String(), want)
	}
}

func TestRunBuildScriptFails(t *testing.T) {
	fakeRepo(t, "echo 'go: module lookup disabled' >&2; exit 3\n")
	var out testrun.Buffer
	err := runBuildScript(t.Context(), t.TempDir(), t.TempDir(), &out)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "module lookup disabled") {
		t.Errorf("runBuildScript = %v, want the exit status and the script's last lines", err)
	}
}

// When the time runs out, the script and what it started are killed: here
// a child that would sleep for five minutes.
func TestRunBuildScriptKilledAtTheDeadline(t *testing.T) {
	fakeRepo(t, `sleep 300 & echo $! > "$MESHD_KUBE_CACHE/child.pid"; wait`)
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runBuildScript(ctx, cache, t.TempDir(), &testrun.Buffer{}) }()
	var pid int
	if !testrun.Poll(10*time.Second, 10*time.Millisecond, func() bool {
		b, err := os.ReadFile(filepath.Join(cache, "child.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}) {
		t.Fatal("the script did not start its child")
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("runBuildScript = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("runBuildScript did not return after its context ended")
	}
	if !testrun.Poll(10*time.Second, 10*time.Millisecond, func() bool { return syscall.Kill(pid, 0) != nil }) {
		t.Errorf("the script's child %d outlived the build", pid)
	}
}

func TestRepoRootNotFound(t *testing.T) {
	if _, err := repoRoot(t.TempDir()); err != errNoScript {
		t.Errorf("repoRoot of a directory outside any repository = %v, want errNoScript", err)
	}
}
