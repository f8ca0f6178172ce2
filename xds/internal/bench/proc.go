package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// emit prints one "metric value unit" line.
func emit(metric string, value any, unit string) {
	if f, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, f, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// cpuSelf returns the CPU time (user and system) this process has used.
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleCPU returns the CPU this process uses over d while nothing changes.
func idleCPU(d time.Duration) time.Duration {
	start := cpuSelf()
	time.Sleep(d)
	return cpuSelf() - start
}

// heapAlloc returns the live heap after two collections.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	return st.HeapAlloc
}

func sortDur(d []time.Duration) []time.Duration {
	out := slices.Clone(d)
	slices.Sort(out)
	return out
}

// percentile returns the nearest-rank percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func meanDur(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// child is the client process, driven by lines on its stdin and answering
// on its stdout.
type child struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	lines   chan string
	timeout time.Duration
}

func startChild(args []string, timeout time.Duration) *child {
	exe, err := os.Executable()
	if err != nil {
		fatalf("executable: %v", err)
	}
	cmd := exec.Command(exe, append([]string{"-child"}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatalf("child stdin: %v", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatalf("child stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		fatalf("start child: %v", err)
	}
	c := &child{cmd: cmd, in: in, lines: make(chan string, 16), timeout: timeout}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

func (c *child) send(format string, args ...any) {
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		fatalf("write to child: %v", err)
	}
}

// wait returns the fields of the child's next line, which must start with
// word.
func (c *child) wait(word string) []string {
	select {
	case l, ok := <-c.lines:
		if !ok {
			fatalf("child exited while the parent waited for %s", word)
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != word {
			fatalf("child said %q, want %s", l, word)
		}
		return f
	case <-time.After(c.timeout):
		fatalf("no %s from the child after %v", word, c.timeout)
	}
	return nil
}

// parseSettled reads "SETTLED bytes msgs cpu_us".
func parseSettled(f []string) (bytes, msgs int64, cpu time.Duration) {
	if len(f) != 4 {
		fatalf("bad SETTLED line %v", f)
	}
	bytes, _ = strconv.ParseInt(f[1], 10, 64)
	msgs, _ = strconv.ParseInt(f[2], 10, 64)
	us, _ := strconv.ParseInt(f[3], 10, 64)
	return bytes, msgs, time.Duration(us) * time.Microsecond
}

func (c *child) quit() {
	c.send("QUIT")
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			fatalf("child: %v", err)
		}
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		fatalf("child did not exit")
	}
}

// parseArmed reads "ARMED affected": how many clients hold the changed
// cluster's load assignment.
func parseArmed(f []string) int {
	if len(f) != 2 {
		fatalf("bad ARMED line %v", f)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		fatalf("bad ARMED line %v", f)
	}
	return n
}

func meanInt(v []int) float64 {
	if len(v) == 0 {
		return 0
	}
	sum := 0
	for _, x := range v {
		sum += x
	}
	return float64(sum) / float64(len(v))
}

// writeHeapProfile writes the live heap, after a collection, to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// startCPUProfile starts profiling this process's CPU to file; stop ends
// it and closes the file.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
