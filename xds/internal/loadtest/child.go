package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
)

// The clients run in a child process, this binary started again with
// clientsEnv set, so that the load's process measures the server's CPU
// alone. The two talk in lines: the parent writes commands on the child's
// stdin, the child answers on its stdout.
//
//	child:  READY                          every client holds its assignments
//	parent: LOAD start_ns duration_ns      the load starts: forget the connect
//	parent: C ip set_ns applied_ns         a pod moved to ip (one per change)
//	parent: END                            the load is over
//	child:  ERR "quoted"                   a client's error, any number
//	child:  MEASURED deliveries lat_p50_ns lat_p99_ns lat_max_ns push_p50_ns
//	        push_p99_ns push_max_ns responses max_rate cpu_us
//	parent: QUIT                           the clients leave
//	child:  LEFT                           they have, and the child exits
//
// Times are Unix nanoseconds of the wall clock both processes share.
const clientsEnv = "MESHD_LOADTEST_CLIENTS"

// clientArgs is what the child needs to connect, as clientsEnv carries
// it: the server's address, the streams, the assignments each wants, the
// services, and the bound of every wait.
type clientArgs struct {
	addr                        string
	streams, perClient, service int
	timeout                     time.Duration
}

func (a clientArgs) String() string {
	return fmt.Sprintf("%s %d %d %d %d", a.addr, a.streams, a.perClient, a.service, a.timeout)
}

func parseClientArgs(s string) (clientArgs, error) {
	var a clientArgs
	var timeout int64
	if _, err := fmt.Sscanf(s, "%s %d %d %d %d", &a.addr, &a.streams, &a.perClient, &a.service, &timeout); err != nil {
		return a, fmt.Errorf("%s=%q: %w", clientsEnv, s, err)
	}
	a.timeout = time.Duration(timeout)
	return a, nil
}

// runChild is the client process: it connects, follows the parent's
// commands from in and answers on out until QUIT.
func runChild(env string, in io.Reader, out io.Writer) error {
	a, err := parseClientArgs(env)
	if err != nil {
		return err
	}
	f, err := connect(a.addr, a.streams, a.perClient, &mesh{services: a.service})
	if err != nil {
		return err
	}
	defer f.leave()
	if err := f.awaitReady(a.streams, a.timeout); err != nil {
		return err
	}
	fmt.Fprintln(out, "READY")
	var cpu0 time.Duration
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "LOAD":
			start, d, err := twoInts(fields)
			if err != nil {
				return err
			}
			f.measured()
			f.changes.forget()
			f.rates.Store(newRates(a.streams, time.Unix(0, start), time.Duration(d)))
			cpu0 = metric.CPU()
		case "C":
			if err := f.stampLine(fields); err != nil {
				return err
			}
		case "END":
			f.report(out, metric.CPU()-cpu0)
		case "QUIT":
			f.leave()
			fmt.Fprintln(out, "LEFT")
			return nil
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read commands: %w", err)
	}
	return errors.New("stdin closed before QUIT")
}

// awaitReady waits until all n clients hold what they asked for.
func (f *fleet) awaitReady(n int, timeout time.Duration) error {
	t0 := time.Now()
	for f.ready.Load() < int64(n) {
		if err := f.err(); err != nil || time.Since(t0) > timeout {
			return errors.Join(fmt.Errorf("%d of %d clients ready after %v", f.ready.Load(), n, time.Since(t0)), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// stampLine takes a "C ip set_ns applied_ns" line.
func (f *fleet) stampLine(fields []string) error {
	if len(fields) != 4 {
		return fmt.Errorf("bad change line %q", strings.Join(fields, " "))
	}
	set, applied, err := twoInts(fields[1:])
	if err != nil {
		return err
	}
	f.changes.stamped(fields[1], stamp{set: time.Unix(0, set), applied: time.Unix(0, applied)})
	return nil
}

// report writes the clients' errors and the MEASURED line of the load.
func (f *fleet) report(out io.Writer, cpu time.Duration) {
	if err := f.err(); err != nil {
		fmt.Fprintln(out, "ERR", strconv.Quote(err.Error()))
	}
	lat, push := f.measured()
	slices.Sort(lat)
	slices.Sort(push)
	var maxRate int32
	if r := f.rates.Load(); r != nil {
		maxRate = r.max()
	}
	fmt.Fprintln(out, "MEASURED", len(lat), spread(lat), spread(push), f.responses.Load(), maxRate, cpu.Microseconds())
}

// spread returns the p50, p99 and maximum of sorted, in nanoseconds.
func spread(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "0 0 0"
	}
	return fmt.Sprintf("%d %d %d", percentile(sorted, 0.50), percentile(sorted, 0.99), sorted[len(sorted)-1])
}

// twoInts parses the two integers after a line's first field.
func twoInts(fields []string) (a, b int64, err error) {
	if len(fields) < 3 {
		return 0, 0, fmt.Errorf("line %q: want two numbers", strings.Join(fields, " "))
	}
	if a, err = strconv.ParseInt(fields[1], 10, 64); err == nil {
		b, err = strconv.ParseInt(fields[2], 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("line %q: %w", strings.Join(fields, " "), err)
	}
	return a, b, nil
}

// childMain runs the client process if this is one, and exits.
func childMain() {
	env, ok := os.LookupEnv(clientsEnv)
	if !ok {
		return
	}
	if err := runChild(env, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest clients:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
