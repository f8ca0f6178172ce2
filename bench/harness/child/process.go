package child

import (
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
)

// Process is a running child. Its methods are for one goroutine.
type Process struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   <-chan string
	timeout time.Duration
}

// Start runs bin -child args..., its stderr on this process's, and waits
// at most timeout for each answer it is asked to Wait for.
func Start(bin string, args []string, timeout time.Duration) (*Process, error) {
	cmd := exec.Command(bin, append([]string{"-child"}, args...)...)
	in, lines, err := StartPiped(cmd, nil)
	if err != nil {
		return nil, fmt.Errorf("child: %w", err)
	}
	return &Process{cmd: cmd, in: in, lines: lines, timeout: timeout}, nil
}

// Send writes one command line.
func (c *Process) Send(format string, args ...any) {
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		metric.Fatalf("write to the child: %v", err)
	}
}

// Wait returns the fields of the child's next line, which must start with
// word and come within the timeout.
func (c *Process) Wait(word string) []string {
	select {
	case l, ok := <-c.lines:
		if !ok {
			metric.Fatalf("the child exited while the parent waited for %s", word)
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != word {
			metric.Fatalf("the child said %q, want %s", l, word)
		}
		return f
	case <-time.After(c.timeout):
		metric.Fatalf("no %s from the child after %v", word, c.timeout)
	}
	return nil
}

// Settled waits for "SETTLED bytes msgs cpu_us": what the clients received
// and the CPU they spent since the last command.
func (c *Process) Settled() (bytes, msgs int64, cpu time.Duration) {
	f := c.Wait("SETTLED")
	if len(f) != 4 {
		metric.Fatalf("bad SETTLED line %v", f)
	}
	var v [3]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			metric.Fatalf("bad SETTLED line %v: %v", f, err)
		}
		v[i] = n
	}
	return v[0], v[1], time.Duration(v[2]) * time.Microsecond
}

// Armed waits for "ARMED n": how many clients hold the changed cluster's
// load assignment.
func (c *Process) Armed() int {
	f := c.Wait("ARMED")
	if len(f) != 2 {
		metric.Fatalf("bad ARMED line %v", f)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		metric.Fatalf("bad ARMED line %v", f)
	}
	return n
}

// Quit sends QUIT, closes the child's stdin and waits up to ten seconds
// for it to exit cleanly, killing it after that.
func (c *Process) Quit() {
	c.Send("QUIT")
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			metric.Fatalf("child: %v", err)
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		metric.Fatalf("the child did not exit")
	}
}
