package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/meshd/meshd/bench/harness/metric"
)

// childFlag marks the run measureOneProc starts; it does not start one of
// its own.
const childFlag = "gomaxprocs1-child"

// oneProcFigures are the figures of the child's run that are reported, as
// name_gomaxprocs1, beside the default GOMAXPROCS's. The single-change and churn figures show what the hand-off between
// the writer's and the handler's goroutines costs when they run on two
// cores: the writer's state cools in one core's cache while it waits.
var oneProcFigures = []string{
	"initial_build", "initial_build_cpu", "meshconfig_change", "meshconfig_change_cpu",
	"latency_cpu_p50", "latency_cpu_p99", "churn_throughput", "churn_cpu",
}

// measureOneProc runs this benchmark again in a child process with
// GOMAXPROCS=1 and the same flags, and reports its oneProcFigures as the
// GOMAXPROCS=1 figures (name _gomaxprocs1): what a second core buys
// is their ratio to this run's. A child runs the same phases on the same
// fresh heap, so that both figures measure the same work; a second graph
// built in this process after the first would find a grown heap, warm
// caches and mapped pages, and measure less.
func measureOneProc() {
	exe, err := os.Executable()
	if err != nil {
		metric.Fatalf("GOMAXPROCS=1 run: %v", err)
	}
	cmd := exec.Command(exe, childArgs(flag.CommandLine)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		metric.Fatalf("GOMAXPROCS=1 run: %v", err)
	}
	figs, err := parseFigures(out)
	if err != nil {
		metric.Fatalf("GOMAXPROCS=1 run: %v", err)
	}
	for _, name := range oneProcFigures {
		if f, ok := figs[name]; ok {
			fmt.Printf("%s_gomaxprocs1 %s %s\n", name, f.value, f.unit)
		}
	}
}

// childArgs returns the flags set on fs, but for the profiles (the child
// must not overwrite the parent's), followed by childFlag.
func childArgs(fs *flag.FlagSet) []string {
	var args []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "cpuprofile", "memprofile", "profile-phase", childFlag:
			return
		}
		args = append(args, "-"+f.Name+"="+f.Value.String())
	})
	return append(args, "-"+childFlag)
}

// figure is one "metric value unit" line's value and unit.
type figure struct{ value, unit string }

// parseFigures reads a run's "metric value unit" lines by metric name. A
// run that did not end with "result PASS" is an error.
func parseFigures(out []byte) (map[string]figure, error) {
	figs := map[string]figure{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			return nil, fmt.Errorf("line %q: want metric, value and unit", sc.Text())
		}
		figs[fields[0]] = figure{value: fields[1], unit: fields[2]}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the figures: %w", err)
	}
	if figs["result"].value != "PASS" {
		return nil, fmt.Errorf("the run did not pass (result %q)", figs["result"].value)
	}
	return figs, nil
}
