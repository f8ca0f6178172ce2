package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/meshd/meshd/bench/harness/child"
)

// clientProcess is the parent's side of the client process (child.go).
// Its methods are for one goroutine.
type clientProcess struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   <-chan string
	done    chan struct{} // closed by quit: the line reader stops
	timeout time.Duration
}

// startClients runs this binary again as the client process for a, its
// stderr on this process's.
func startClients(a clientArgs) (*clientProcess, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("clients: %w", err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), clientsEnv+"="+a.String())
	done := make(chan struct{})
	stdin, lines, err := child.StartPiped(cmd, done)
	if err != nil {
		return nil, fmt.Errorf("clients: %w", err)
	}
	return &clientProcess{cmd: cmd, stdin: stdin, lines: lines, done: done, timeout: a.timeout}, nil
}

// send writes command lines to the child.
func (p *clientProcess) send(lines string) error {
	if _, err := io.WriteString(p.stdin, lines); err != nil {
		return fmt.Errorf("write to the clients: %w", err)
	}
	return nil
}

// await returns the fields of the child's next line, which must start
// with word and come within the timeout.
func (p *clientProcess) await(word string) ([]string, error) {
	select {
	case l, ok := <-p.lines:
		if !ok {
			return nil, fmt.Errorf("the clients exited while waiting for %s", word)
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != word {
			return nil, fmt.Errorf("the clients said %q, want %s", l, word)
		}
		return f, nil
	case <-time.After(p.timeout):
		return nil, fmt.Errorf("no %s from the clients after %v", word, p.timeout)
	}
}

// load tells the child the load starts now and lasts d.
func (p *clientProcess) load(start time.Time, d time.Duration) error {
	return p.send(fmt.Sprintf("LOAD %d %d\n", start.UnixNano(), d.Nanoseconds()))
}

// changed tells the child the IPs of one write, set at set, applied when
// it returned.
func (p *clientProcess) changed(ips []string, set, applied time.Time) error {
	var b strings.Builder
	for _, ip := range ips {
		fmt.Fprintf(&b, "C %s %d %d\n", ip, set.UnixNano(), applied.UnixNano())
	}
	return p.send(b.String())
}

// measured is what the clients measured over the load.
type measured struct {
	deliveries           int
	latency, pushLatency [3]time.Duration // p50, p99, max
	responses            int64
	maxRate              int64
	cpu                  time.Duration
	err                  error
}

// end ends the load and returns what the clients measured; their errors
// are in its err.
func (p *clientProcess) end() (measured, error) {
	var m measured
	if err := p.send("END\n"); err != nil {
		return m, err
	}
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return m, errors.New("the clients exited before MEASURED")
			}
			if q, isErr := strings.CutPrefix(l, "ERR "); isErr {
				msg, err := strconv.Unquote(q)
				if err != nil {
					msg = q
				}
				m.err = errors.Join(m.err, errors.New(msg))
				continue
			}
			return m, parseMeasured(l, &m)
		case <-time.After(p.timeout):
			return m, fmt.Errorf("no MEASURED from the clients after %v", p.timeout)
		}
	}
}

// parseMeasured reads a MEASURED line into m.
func parseMeasured(l string, m *measured) error {
	f := strings.Fields(l)
	if len(f) != 11 || f[0] != "MEASURED" {
		return fmt.Errorf("the clients said %q, want MEASURED", l)
	}
	var v [10]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return fmt.Errorf("bad MEASURED line %q: %w", l, err)
		}
		v[i] = n
	}
	m.deliveries = int(v[0])
	for i := range 3 {
		m.latency[i], m.pushLatency[i] = time.Duration(v[1+i]), time.Duration(v[4+i])
	}
	m.responses, m.maxRate, m.cpu = v[7], v[8], time.Duration(v[9])*time.Microsecond
	return nil
}

// quit has the clients leave, waits for the child to say so and to exit,
// and kills it if it does not within the timeout.
func (p *clientProcess) quit() error {
	err := p.send("QUIT\n")
	if err == nil {
		_, err = p.await("LEFT")
	}
	p.stdin.Close()
	close(p.done)
	killed := false
	if !p.drain() {
		p.cmd.Process.Kill()
		killed = true
		err = errors.Join(err, errors.New("the clients did not exit"))
		p.drain()
	}
	if werr := p.cmd.Wait(); werr != nil && !killed {
		err = errors.Join(err, fmt.Errorf("clients: %w", werr))
	}
	return err
}

// drain discards the child's lines until its stdout ends, which it does
// when the child exits, and reports whether that came within the timeout.
func (p *clientProcess) drain() bool {
	deadline := time.After(p.timeout)
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}
