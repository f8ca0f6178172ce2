package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"
)

// bin is the meshd binary built once for the package's tests.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "meshd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "meshd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	apiServer.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestBadCommandLines checks that meshd refuses a bad start with a single
// line on stderr and a non-zero exit.
func TestBadCommandLines(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, "unknown flag: --nope"},
		{"bad address", []string{"--xds-addr", "localhost"}, "--xds-addr"},
		{"bad duration", []string{"--push-debounce", "fast"}, "--push-debounce"},
		{"missing dir", []string{"--config-dir", "/does/not/exist", "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0"}, "--config-dir"},
		{"bad log format", []string{"--log-format", "yaml"}, "--log-format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("exit: %v, want a non-zero exit code", err)
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "meshd: ") || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr = %q, want one line \"meshd: ...%s...\"", stderr.String(), tc.want)
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	out, err := exec.Command(bin, "--help").Output()
	if err != nil {
		t.Fatalf("--help: %v", err)
	}
	if !strings.Contains(string(out), "--config-dir") || !strings.Contains(string(out), "--debug-addr") {
		t.Errorf("--help output:\n%s", out)
	}
}

// TestContract runs `meshd --config-dir DIR --xds-addr 127.0.0.1:PORT
// --debug-addr 127.0.0.1:PORT`, waits until it is ready, and stops it with
// SIGTERM.
func TestContract(t *testing.T) {
	dir := t.TempDir()
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n"
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(svc), 0o644); err != nil {
		t.Fatal(err)
	}
	xdsAddr, debugAddr := freeAddr(t), freeAddr(t)
	m := startMeshd(t, "--config-dir", dir, "--xds-addr", xdsAddr, "--debug-addr", debugAddr, "--log-format", "json")
	base := "http://" + debugAddr
	m.waitReady(t, base+"/readyz", 30*time.Second)

	if code, body := get(base + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if _, body := get(base + "/metrics"); !strings.Contains(body, `meshd_krt_collection_size{collection="folder/Service",kind="static"} 1`) {
		t.Errorf("/metrics lacks the folder's Service collection")
	}
	if _, body := get(base + "/debug/api/graph"); !strings.Contains(body, "folder/Service") {
		t.Errorf("debug UI graph lacks folder/Service")
	}
	for _, want := range []string{xdsAddr, debugAddr + "/debug/ui", debugAddr + "/metrics"} {
		if !strings.Contains(m.logs.String(), want) {
			t.Errorf("start-up log does not say %s", want)
		}
	}

	m.stop(t, 10*time.Second)
	if !strings.Contains(m.logs.String(), "meshd stopped") {
		t.Errorf("no stop line in the log:\n%s", m.logs.String())
	}
}

// meshdProcess is the meshd binary running under a test, its output
// captured.
type meshdProcess struct {
	cmd    *exec.Cmd
	logs   *testrun.Buffer
	exited chan error // receives Wait's result once
}

// startMeshd starts bin with args; t's cleanup kills it if it still runs.
func startMeshd(t *testing.T, args ...string) *meshdProcess {
	t.Helper()
	m := &meshdProcess{cmd: exec.Command(bin, args...), logs: &testrun.Buffer{}, exited: make(chan error, 1)}
	m.cmd.Stdout, m.cmd.Stderr = m.logs, m.logs
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.exited <- m.cmd.Wait() }()
	t.Cleanup(func() {
		if m.cmd.ProcessState == nil {
			m.cmd.Process.Kill()
			<-m.exited
		}
	})
	return m
}

// waitReady polls url until it answers 200, and fails t if meshd exits
// first or timeout passes.
func (m *meshdProcess) waitReady(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		code, body := get(url)
		if code == http.StatusOK {
			return
		}
		select {
		case err := <-m.exited:
			t.Fatalf("meshd exited before ready: %v\n%s", err, m.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d %q after %v\n%s", url, code, body, timeout, m.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends meshd SIGTERM and fails t unless it exits cleanly within
// timeout.
func (m *meshdProcess) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-m.exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, m.logs.String())
		}
	case <-time.After(timeout):
		t.Fatalf("meshd still running %v after SIGTERM\n%s", timeout, m.logs.String())
	}
}

func get(url string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
