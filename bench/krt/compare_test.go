package main

import (
	"strings"
	"testing"
)

func run1(t *testing.T, text string) runOutput {
	t.Helper()
	r, err := parseRun(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseRunNeedsPass(t *testing.T) {
	if _, err := parseRun(strings.NewReader("initial_build 10 ms\n")); err == nil {
		t.Fatal("a run without result PASS was accepted")
	}
}

func TestMedian(t *testing.T) {
	runs := []runOutput{
		run1(t, "x 3 ms\nresult PASS status\n"),
		run1(t, "x 1 ms\nresult PASS status\n"),
		run1(t, "x 2 ms\ny 5 ms\nresult PASS status\n"),
	}
	tests := []struct {
		metric string
		want   float64
		ok     bool
	}{
		{"x", 2, true},
		{"y", 5, true},
		{"z", 0, false},
	}
	for _, tc := range tests {
		got, _, ok := median(runs, tc.metric)
		if got != tc.want || ok != tc.ok {
			t.Errorf("median(%s) = %v, %v; want %v, %v", tc.metric, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWriteComparison(t *testing.T) {
	ours := []runOutput{run1(t, "initial_build 100 ms\nchurn_throughput 9000 events/s\nheap_inuse_delta_per_pod 1000 bytes/pod\nchurn_submit 50 ms\nresult PASS status\n")}
	istio := []runOutput{run1(t, "initial_build 250 ms\nchurn_throughput 1000 events/s\nheap_inuse_delta_per_pod 2500 bytes/pod\nchurn_submit 5 ms\nresult PASS status\n")}
	var b strings.Builder
	writeComparison(&b, ours, istio)
	out := b.String()
	for _, want := range []string{
		"| initial_build | 100.0 ms | 250.0 ms | 2.50 | **no** (≥ 3× wanted) |",
		"| churn_throughput | 9000 events/s | 1000 events/s | 9.00 | yes (≥ 3×) |",
		"| heap_inuse_delta_per_pod | 1000 bytes/pod | 2500 bytes/pod | 2.50 | yes (≥ 2×) |",
		"| churn_submit | 50.0 ms | 5.00 ms | n/a (sync vs async) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "latency_p99") {
		t.Errorf("table shows a metric neither side has:\n%s", out)
	}
}
