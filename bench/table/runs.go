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
)

// errNoPass is returned for a run that did not end with "result PASS".
var errNoPass = errors.New("run did not end with result PASS")

// figure is one metric of one run.
type figure struct {
	value float64
	unit  string
	text  string
}

// runOutput is the metrics of one run, by name.
type runOutput map[string]figure

// parseRun reads "metric value unit" lines; other lines are skipped.
func parseRun(r io.Reader, needPass bool) (runOutput, error) {
	out := runOutput{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		out[f[0]] = figure{v, f[2], f[1]}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	if needPass && out["result"].text != "PASS" {
		return nil, errNoPass
	}
	return out, nil
}

// loadRuns reads the comma-separated run files of list.
func loadRuns(list string, needPass bool) ([]runOutput, error) {
	var runs []runOutput
	for _, p := range strings.Split(list, ",") {
		if p == "" {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("open run output: %w", err)
		}
		r, err := parseRun(f, needPass)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// median returns the median of metric over runs, its unit, and whether
// any run has it.
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
