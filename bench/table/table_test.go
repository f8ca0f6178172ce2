package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run1(t *testing.T, text string) runOutput {
	t.Helper()
	r, err := parseRun(strings.NewReader(text), true)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseRunNeedsPass(t *testing.T) {
	if _, err := parseRun(strings.NewReader("initial_build 10 ms\n"), true); !errors.Is(err, errNoPass) {
		t.Fatalf("a run without result PASS: err %v, want errNoPass", err)
	}
	r, err := parseRun(strings.NewReader("change_latency_p50 3 ms\nnot a metric line\n"), false)
	if err != nil || r["change_latency_p50"].value != 3 || len(r) != 1 {
		t.Fatalf("parseRun without PASS required = %v, %v", r, err)
	}
}

func TestMedian(t *testing.T) {
	runs := []runOutput{
		run1(t, "x 3 ms\nresult PASS status\n"),
		run1(t, "x 1 ms\nresult PASS status\n"),
		run1(t, "x 2 ms\ny 5 ms\nresult PASS status\n"),
		run1(t, "w 2 ms\nresult PASS status\n"),
		run1(t, "w 4 ms\nresult PASS status\n"),
	}
	tests := []struct {
		metric string
		want   float64
		ok     bool
	}{
		{"x", 2, true},
		{"y", 5, true},
		{"w", 3, true}, // even count: the mean of the middle two
		{"z", 0, false},
	}
	for _, tc := range tests {
		got, _, ok := median(runs, tc.metric)
		if got != tc.want || ok != tc.ok {
			t.Errorf("median(%s) = %v, %v; want %v, %v", tc.metric, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWriteTableKrt(t *testing.T) {
	runs := runsOf(t,
		"meshd", "initial_build 100 ms\nchurn_throughput 9000 events/s\nheap_inuse_delta_per_pod 1000 bytes/pod\nchurn_submit 50 ms\nresult PASS status\n",
		"istio", "initial_build 250 ms\nchurn_throughput 1000 events/s\nheap_inuse_delta_per_pod 2500 bytes/pod\nchurn_submit 5 ms\nresult PASS status\n",
		"floor", "initial_build 10 ms\nheap_inuse_delta_per_pod 800 bytes/pod\nresult PASS status\n",
	)
	out := tableOf(t, "krt", runs, true,
		"| metric | meshd krt | Istio krt | floor (plain maps) | Istio ÷ meshd | meshd ÷ floor | target met? |\n|---|---:|---:|---:|---:|---:|---:|\n",
		"| initial_build | 100.0 ms | 250.0 ms | 10.0 ms | 2.50 | 10.00 | **no** (≥ 3× wanted) |",
		"| churn_throughput | 9000 events/s | 1000 events/s | — | 9.00 | — | yes (≥ 3×) |",
		"| heap_inuse_delta_per_pod | 1000 bytes/pod | 2500 bytes/pod | 800.0 bytes/pod | 2.50 | 1.25 | yes (≥ 2×) |",
		"| churn_submit | 50.0 ms | 5.00 ms | — | n/a (sync vs async) | — |  |",
		"Runs (medians): meshd krt 1, Istio krt 1, floor (plain maps) 1.",
	)
	if strings.Contains(out, "latency_p99") {
		t.Errorf("table shows a metric no side has:\n%s", out)
	}
}

func TestWriteTableXDS(t *testing.T) {
	runs := runsOf(t,
		"sotw", "change_server_cpu_mean 20 ms\nconnect_bytes_per_client 1000 bytes\nresult PASS status\n",
		"delta", "change_server_cpu_mean 5 ms\nresult PASS status\n",
		"gcp", "change_server_cpu_mean 2000 ms\nconnect_bytes_per_client 1500 bytes\nsnapshot_build 20 ms\nresult PASS status\n",
	)
	tableOf(t, "xds", runs, false,
		"| metric | meshd SotW | meshd Delta | go-control-plane | gcp ÷ meshd SotW | gcp ÷ meshd Delta |\n",
		"| change_server_cpu_mean | 20.0 ms | 5.00 ms | 2000 ms | 100.00 | 400.00 |",
		"| connect_bytes_per_client | 1000 bytes | — | 1500 bytes | 1.50 | — |",
		"| snapshot_build | — | — | 20.0 ms | — | — |",
	)
}

// TestWriteTableAB: a base revision beside this tree, with no targets
// and a ratio even where ours and Istio's differ in kind.
func TestWriteTableAB(t *testing.T) {
	runs := runsOf(t,
		"base", "initial_build 120 ms\nchurn_submit 60 ms\ngoroutines 9 count\nresult PASS status\n",
		"current", "initial_build 100 ms\nchurn_submit 50 ms\ngoroutines 10 count\nresult PASS status\n",
	)
	tableOf(t, "krt-ab", runs, false,
		"| metric | base | this tree | base ÷ this tree |\n",
		"| initial_build | 120.0 ms | 100.0 ms | 1.20 |",
		"| churn_submit | 60.0 ms | 50.0 ms | 1.20 |",
		"| goroutines | 9.00 count | 10.0 count | info |",
	)
	if layouts["krt"].metrics[0].target == 0 {
		t.Error("the A/B layout cleared the krt layout's targets")
	}
}

// runsOf returns one run per side from pairs of a side's name and its
// output.
func runsOf(t *testing.T, pairs ...string) map[string][]runOutput {
	t.Helper()
	runs := map[string][]runOutput{}
	for i := 0; i+1 < len(pairs); i += 2 {
		runs[pairs[i]] = []runOutput{run1(t, pairs[i+1])}
	}
	return runs
}

// tableOf writes the table of layout lay over runs, checks that it holds
// each of want and a "target met?" column if and only if targets, and
// returns it.
func tableOf(t *testing.T, lay string, runs map[string][]runOutput, targets bool, want ...string) string {
	t.Helper()
	var b strings.Builder
	writeTable(&b, layouts[lay], runs)
	out := b.String()
	if strings.Contains(out, "target met?") != targets {
		t.Errorf("layout %s: a target column %v, want %v:\n%s", lay, !targets, targets, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	return out
}

func TestLoadRunsNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.txt"), filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(good, []byte("x 1 ms\nresult PASS status\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("x 1 ms\nresult FAIL status\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, err := loadRuns(good+",", true)
	if err != nil || len(runs) != 1 {
		t.Fatalf("loadRuns(good) = %d runs, %v", len(runs), err)
	}
	if _, err := loadRuns(good+","+bad, true); err == nil || !strings.Contains(err.Error(), bad) || !errors.Is(err, errNoPass) {
		t.Fatalf("loadRuns(bad) = %v, want an errNoPass naming %s", err, bad)
	}
}

// TestWriteTableOneProcChurn: the churn figures of bench/krt's
// GOMAXPROCS=1 child have rows, throughput with its ratio inverted.
func TestWriteTableOneProcChurn(t *testing.T) {
	runs := runsOf(t,
		"base", "churn_throughput_gomaxprocs1 50000 events/s\nchurn_cpu_gomaxprocs1 150 ms\nlatency_cpu_p99_gomaxprocs1 80 us\nresult PASS status\n",
		"current", "churn_throughput_gomaxprocs1 100000 events/s\nchurn_cpu_gomaxprocs1 100 ms\nlatency_cpu_p99_gomaxprocs1 40 us\nresult PASS status\n",
	)
	tableOf(t, "krt-ab", runs, false,
		"| churn_throughput_gomaxprocs1 | 50000 events/s | 100000 events/s | 2.00 |",
		"| churn_cpu_gomaxprocs1 | 150.0 ms | 100.0 ms | 1.50 |",
		"| latency_cpu_p99_gomaxprocs1 | 80.0 us | 40.0 us | 2.00 |",
	)
}
