package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// metricSpec says how to read one metric in a comparison.
type metricSpec struct {
	name         string
	higherBetter bool
	target       float64 // required advantage of ours over Istio; 0: none
	// note, when set, replaces the ratio of figures that are not better or
	// worse, only different: our writes return after propagating, Istio's
	// after enqueueing; our handlers see every committed state, Istio's
	// coalesce.
	note string
}

// compared lists the metrics of the comparison table, in order. Metrics
// only one side prints are shown with the other side blank.
var compared = []metricSpec{
	{name: "initial_build", higherBetter: false, target: 3},
	{name: "initial_build_pods_per_s", higherBetter: true, target: 0},
	{name: "initial_build_cpu", higherBetter: false, target: 0},
	{name: "heap_inuse_delta_per_pod", higherBetter: false, target: 2},
	{name: "heap_alloc_delta_per_pod", higherBetter: false, target: 0},
	{name: "goroutines", note: "info"},
	{name: "latency_p50", higherBetter: false, target: 0},
	{name: "latency_p99", higherBetter: false, target: 3},
	{name: "latency_max", higherBetter: false, target: 0},
	{name: "churn_submit", higherBetter: false, target: 0, note: "n/a (sync vs async)"},
	{name: "churn_total", higherBetter: false, target: 0},
	{name: "churn_throughput", higherBetter: true, target: 3},
	{name: "churn_cpu", higherBetter: false, target: 0},
	{name: "churn_handler_batches", note: "info"},
	{name: "probe_endpoint_events", note: "info"},
	{name: "probe_distinct_ips_observed", note: "info"},
	{name: "meshconfig_change_commit", higherBetter: false, target: 0, note: "n/a (sync vs async)"},
	{name: "meshconfig_change", higherBetter: false, target: 0},
	{name: "meshconfig_workloads_per_s", higherBetter: true, target: 0},
	{name: "meshconfig_change_cpu", higherBetter: false, target: 0},
}

// runOutput is the metrics of one run: metric -> (value, unit).
type runOutput map[string]struct {
	value float64
	unit  string
	text  string
}

func parseRun(r io.Reader) (runOutput, error) {
	out := runOutput{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		out[f[0]] = struct {
			value float64
			unit  string
			text  string
		}{v, f[2], f[1]}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	if out["result"].text != "PASS" {
		return nil, fmt.Errorf("run did not end with result PASS")
	}
	return out, nil
}

func loadRuns(list string) ([]runOutput, error) {
	var runs []runOutput
	for _, p := range strings.Split(list, ",") {
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("open run output: %w", err)
		}
		r, err := parseRun(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// median returns the median of metric over runs, and whether any run has it.
func median(runs []runOutput, metric string) (float64, string, bool) {
	var vs []float64
	unit := ""
	for _, r := range runs {
		if m, ok := r[metric]; ok {
			vs = append(vs, m.value)
			unit = m.unit
		}
	}
	if len(vs) == 0 {
		return 0, "", false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], unit, true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, unit, true
}

// writeComparison prints a Markdown table of the medians of ours and
// Istio's runs. The ratio is ours' advantage: Istio/ours for a metric where
// lower is better, ours/Istio where higher is better, so > 1 favours ours.
func writeComparison(w io.Writer, ours, istio []runOutput) {
	fmt.Fprintf(w, "| metric | ours | Istio krt | ratio (×, >1 = ours better) | target met? |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---|\n")
	for _, m := range compared {
		o, unit, okO := median(ours, m.name)
		i, unitI, okI := median(istio, m.name)
		if !okO && !okI {
			continue
		}
		if unit == "" {
			unit = unitI
		}
		cell := func(v float64, ok bool) string {
			if !ok {
				return "—"
			}
			return strconv.FormatFloat(v, 'f', digits(v), 64) + " " + unit
		}
		ratio, met := "—", ""
		if m.note != "" {
			ratio = m.note
		} else if okO && okI && o > 0 && i > 0 {
			adv := i / o
			if m.higherBetter {
				adv = o / i
			}
			ratio = strconv.FormatFloat(adv, 'f', 2, 64)
			if m.target > 0 {
				if adv >= m.target {
					met = fmt.Sprintf("yes (≥ %g×)", m.target)
				} else {
					met = fmt.Sprintf("**no** (≥ %g× wanted)", m.target)
				}
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", m.name, cell(o, okO), cell(i, okI), ratio, met)
	}
	fmt.Fprintf(w, "\nruns: ours %d, Istio %d (medians)\n", len(ours), len(istio))
}

func digits(v float64) int {
	switch {
	case v >= 1000:
		return 0
	case v >= 10:
		return 1
	}
	return 2
}

// compareMain implements -compare.
func compareMain(oursList, istioList string) {
	ours, err := loadRuns(oursList)
	must(err)
	istio, err := loadRuns(istioList)
	must(err)
	if len(ours) == 0 || len(istio) == 0 {
		fatalf("-compare needs -ours and -istio run outputs")
	}
	writeComparison(os.Stdout, ours, istio)
}
