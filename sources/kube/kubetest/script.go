package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildScript is the repository's build of the binaries, relative to its
// root.
const buildScript = ".ci/kube-testenv.sh"

// errNoScript is returned when the binaries are missing and no build
// script is found above the working directory (a test binary runs in its
// package's directory).
var errNoScript = errors.New("no " + buildScript + " above the working directory to build kube-apiserver and etcd with")

// repoRoot returns the closest directory at or above dir that holds the
// build script.
func repoRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, buildScript)); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errNoScript
		}
		dir = parent
	}
}

// runBuildScript runs the build script into bin, writing its output to
// out line by line. The caller holds the cache's lock, which the script
// would otherwise take. The script runs in a process group of its own:
// when ctx ends, it and every process it started (go get, go build, the
// compilers) are killed together. A Ctrl-C of go test does not reach that
// group: an interrupted run's build goes on to its end in the background,
// filling the cache and holding the lock until then.
func runBuildScript(ctx context.Context, cache, bin string, out io.Writer) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := repoRoot(wd)
	if err != nil {
		return err
	}
	lines := &lineWriter{w: out, prefix: "kubetest: | "}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, buildScript), "build")
	cmd.Env = append(os.Environ(), "MESHD_KUBE_LOCK_HELD=1", "MESHD_KUBE_CACHE="+cache, "MESHD_KUBE_BIN="+bin)
	cmd.Stdout, cmd.Stderr = lines, lines
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	lines.flush()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s build: %w; its last lines:\n%s", buildScript, err, lines.tail())
	}
	return nil
}

// lineWriter copies whole lines to w, each after prefix, but for go get's
// list of modules, and keeps the last few lines for an error message. It is safe for concurrent use.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	part   []byte
	last   []string
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lineLocked(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
}

// flush writes what is left of an unfinished last line.
func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.lineLocked(string(l.part))
		l.part = nil
	}
}

func (l *lineWriter) lineLocked(line string) {
	// go get names each of the ~170 modules it adds: the script's own
	// "preparing build module" line says what is going on.
	if !strings.HasPrefix(line, "go: added ") && !strings.HasPrefix(line, "go: downloading ") {
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, line)
	}
	if l.last = append(l.last, line); len(l.last) > 20 {
		l.last = l.last[1:]
	}
}

// tail returns the last lines written.
func (l *lineWriter) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.last, "\n")
}
