package xdsclients

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// process is a Client running as a script in a child process, spoken to
// in JSON lines.
type process struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	// stderr is the file the child logs to, read for failure messages.
	stderr stderrFile
	// broken is set once an answer went missing: later answers would
	// be out of step with their calls.
	broken error
}

// startProcess runs argv with the bootstrap written to a file named by
// GRPC_XDS_BOOTSTRAP, plus env, and stops it at the end of the test.
func startProcess(t testing.TB, name string, bootstrap []byte, env []string, argv ...string) *process {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bootstrap.json")
	if err := os.WriteFile(path, bootstrap, 0o600); err != nil {
		t.Fatalf("%s: write bootstrap: %v", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(childEnv(), append(env, "GRPC_XDS_BOOTSTRAP="+path)...)
	stderr, err := os.Create(filepath.Join(t.TempDir(), name+".stderr"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { stderr.Close() })
	p := &process{name: name, cmd: cmd, lines: make(chan string, 1), stderr: stderrFile{stderr.Name()}}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start %s: %v", name, argv[0], err)
	}
	p.stdin = stdin
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { p.stop(t, read) })
	return p
}

// childEnv is this process's environment without proxy settings: the
// clients must dial loopback directly, and gRPC honours those variables.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(strings.ToLower(k), "_proxy") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// stop closes the child's stdin, on which it exits, and kills it if it
// has not within 10s. It logs the child's stderr when the child failed
// or was killed, or when t failed: what the child logged is often why.
func (p *process) stop(t testing.TB, read <-chan struct{}) {
	p.stdin.Close()
	done := make(chan error, 1)
	go func() {
		// Drain lines nobody waits for, so the reader can end.
		for range p.lines {
		}
		<-read
		done <- p.cmd.Wait()
	}()
	select {
	case err := <-done:
		switch {
		case err != nil:
			t.Logf("%s exited: %v\n%s", p.name, err, p.stderr)
		case t.Failed():
			t.Logf("%s stderr:\n%s", p.name, p.stderr)
		}
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
		t.Logf("%s killed after 10s\n%s", p.name, p.stderr)
	}
}

// Call implements Client.
func (p *process) Call(ctx context.Context, c Call) ([]Result, error) {
	if p.broken != nil {
		return nil, p.broken
	}
	line, err := c.command()
	if err != nil {
		return nil, err
	}
	if _, err := p.stdin.Write(line); err != nil {
		return nil, fmt.Errorf("%s: send call: %w\n%s", p.name, err, p.stderr)
	}
	c = c.withDefaults()
	// Each call ends by its deadline; the margin is the script's own time.
	limit := time.Duration(c.Count)*c.Timeout + 10*time.Second
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok {
			return nil, fmt.Errorf("%s exited\n%s", p.name, p.stderr)
		}
		return decodeResults(p.name, l)
	case <-timer.C:
		p.broken = fmt.Errorf("%s: no answer within %v\n%s", p.name, limit, p.stderr)
	case <-ctx.Done():
		p.broken = fmt.Errorf("%s: %w", p.name, ctx.Err())
	}
	return nil, p.broken
}

func decodeResults(name, line string) ([]Result, error) {
	var out struct {
		Results []Result `json:"results"`
		Error   string   `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &out); err != nil {
		return nil, fmt.Errorf("%s: answer %q: %w", name, line, err)
	}
	if out.Error != "" {
		return nil, fmt.Errorf("%s: %s", name, out.Error)
	}
	return out.Results, nil
}

// stderrFile is the file a child's stderr goes to; its String is what
// the child wrote so far.
type stderrFile struct{ path string }

func (f stderrFile) String() string {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return "(stderr unreadable: " + err.Error() + ")"
	}
	return string(b)
}
