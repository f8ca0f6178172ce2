package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// clients is the client process: xds/internal/bench's binary run with
// -child, the same P SotW ADS clients meshd's bench measures with. It is
// driven by lines on its stdin (CONNECT, EXPECT, QUIT) and answers on its
// stdout (STARTED, READY, ARMED, GOT, SETTLED).
type clients struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   chan string
	timeout time.Duration
}

func startClients(bin string, args []string, timeout time.Duration) (*clients, error) {
	cmd := exec.Command(bin, append([]string{"-child"}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("client process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("-client %s: %w", bin, err)
	}
	c := &clients{cmd: cmd, in: in, lines: make(chan string, 16), timeout: timeout}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c, nil
}

func (c *clients) send(format string, args ...any) {
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		fatalf("write to the client process: %v", err)
	}
}

// wait returns the fields of the next line, which must start with word.
func (c *clients) wait(word string) []string {
	select {
	case l, ok := <-c.lines:
		if !ok {
			fatalf("the client process exited while waiting for %s", word)
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != word {
			fatalf("the client process said %q, want %s", l, word)
		}
		return f
	case <-time.After(c.timeout):
		fatalf("no %s from the client process after %v", word, c.timeout)
	}
	return nil
}

// settled reads "SETTLED bytes msgs cpu_us": what the clients received and
// the CPU they spent since the last command.
func (c *clients) settled() (bytes, msgs int64, cpu time.Duration) {
	f := c.wait("SETTLED")
	if len(f) != 4 {
		fatalf("bad SETTLED line %v", f)
	}
	bytes, _ = strconv.ParseInt(f[1], 10, 64)
	msgs, _ = strconv.ParseInt(f[2], 10, 64)
	us, _ := strconv.ParseInt(f[3], 10, 64)
	return bytes, msgs, time.Duration(us) * time.Microsecond
}

// armed reads "ARMED n": how many clients hold the changed cluster.
func (c *clients) armed() int {
	f := c.wait("ARMED")
	n, err := strconv.Atoi(f[len(f)-1])
	if len(f) != 2 || err != nil {
		fatalf("bad ARMED line %v", f)
	}
	return n
}

func (c *clients) quit() {
	c.send("QUIT")
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fatalf("client process: %v", err)
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		fatalf("the client process did not exit")
	}
}
