package app

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exampleClientDir is examples/grpc-client, a module of its own.
const exampleClientDir = "../../../examples/grpc-client"

// TestExampleGRPCClient builds examples/grpc-client as a user would, on
// its own go.mod (GOWORK=off), starts its backend on an ephemeral
// loopback port, serves the example's mesh folder (its port rewritten to
// the backend's) from an in-process meshd, and runs the client with the
// example's bootstrap file (its server_uri rewritten to meshd's): every
// RPC must be answered by that backend.
func TestExampleGRPCClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a separate Go module")
	}
	bin := filepath.Join(t.TempDir(), "grpc-client")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = exampleClientDir, append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/grpc-client: %v\n%s", err, out)
	}
	backend := startExampleBackend(t, bin)
	_, port, _ := strings.Cut(backend, ":")

	dir := t.TempDir()
	writeRewritten(t, filepath.Join(exampleClientDir, "mesh", "greeter.yaml"), filepath.Join(dir, "greeter.yaml"), "50051", port)
	cfg := DefaultConfig()
	cfg.ConfigDir = dir
	r := start(t, cfg)
	bootstrap := filepath.Join(t.TempDir(), "bootstrap.json")
	writeRewritten(t, filepath.Join(exampleClientDir, "bootstrap.json"), bootstrap, "127.0.0.1:15010", r.app.XDSAddr())

	target := "xds:///greeter.default.svc.cluster.local:" + port
	client := exec.Command(bin, "-target", target, "-n", "3", "-timeout", "30s")
	client.Env = append(os.Environ(), "GRPC_XDS_BOOTSTRAP="+bootstrap)
	out, err := client.CombinedOutput()
	if err != nil {
		t.Fatalf("grpc-client: %v\n%s\nmeshd log:\n%s", err, out, r.log)
	}
	var want strings.Builder
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(&want, "rpc %d: SERVING from %s\n", i, backend)
	}
	if string(out) != want.String() {
		t.Errorf("grpc-client printed:\n%s\nwant:\n%s", out, want.String())
	}
}

// startExampleBackend runs the example's -serve mode on an ephemeral
// loopback port, returns the address it reports, and stops it with
// SIGINT at the end of the test.
func startExampleBackend(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "-serve", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		s.Scan()
		lines <- s.Text()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case line := <-lines:
		addr, ok := strings.CutPrefix(line, "serving on ")
		if !ok {
			t.Fatalf("backend printed %q, want \"serving on ADDR\"", line)
		}
		return addr
	case <-ctx.Done():
		t.Fatal("backend did not report its address within 30s")
		return ""
	}
}

// writeRewritten copies the file src to dst with old, which must occur
// in it, replaced by new.
func writeRewritten(t *testing.T, src, dst, old, new string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", src, old)
	}
	if err := os.WriteFile(dst, []byte(strings.ReplaceAll(string(data), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}
