package main

// metricSpec says how to read one metric.
type metricSpec struct {
	name         string
	higherBetter bool
	// target is the advantage the first ratio of the layout must show
	// (0: none), checked in a "target met?" column.
	target float64
	// note, when set, replaces the ratios of figures that differ in kind
	// rather than degree: our krt writes return after propagating,
	// Istio's after enqueueing; our handlers see every committed state,
	// Istio's coalesce.
	note string
}

// column is one side of a comparison: the -run name and its heading.
type column struct{ name, heading string }

// ratio compares two sides: the figure of theirs over ours for a metric
// where lower is better, ours over theirs where higher is better, so
// that above 1 favours ours.
type ratio struct {
	theirs, ours string
	heading      string
}

// layout is one comparison table.
type layout struct {
	columns []column
	ratios  []ratio
	metrics []metricSpec
	// needPass requires every run to end with "result PASS".
	needPass bool
}

var layouts = map[string]layout{
	"krt": {
		columns: []column{{"meshd", "meshd krt"}, {"istio", "Istio krt"}, {"floor", "floor (plain maps)"}},
		ratios: []ratio{
			{theirs: "istio", ours: "meshd", heading: "Istio ÷ meshd"},
			{theirs: "meshd", ours: "floor", heading: "meshd ÷ floor"},
		},
		needPass: true,
		metrics:  krtMetrics,
	},
	"xds": {
		columns: []column{{"sotw", "meshd SotW"}, {"delta", "meshd Delta"}, {"gcp", "go-control-plane"}},
		ratios: []ratio{
			{theirs: "gcp", ours: "sotw", heading: "gcp ÷ meshd SotW"},
			{theirs: "gcp", ours: "delta", heading: "gcp ÷ meshd Delta"},
		},
		metrics: xdsMetrics,
	},
	// The A/B layouts (compare.sh with BASE) set a base revision's
	// benchmarks beside this tree's.
	"krt-ab": {
		columns:  []column{{"base", "base"}, {"current", "this tree"}},
		ratios:   []ratio{{theirs: "base", ours: "current", heading: "base ÷ this tree"}},
		needPass: true,
		metrics:  sameKind(krtMetrics),
	},
	"xds-ab": {
		columns: []column{{"base-sotw", "base SotW"}, {"sotw", "SotW"}, {"base-delta", "base Delta"}, {"delta", "Delta"}},
		ratios: []ratio{
			{theirs: "base-sotw", ours: "sotw", heading: "base ÷ this tree, SotW"},
			{theirs: "base-delta", ours: "delta", heading: "base ÷ this tree, Delta"},
		},
		metrics: sameKind(xdsMetrics),
	},
}

// krtMetrics are the figures of bench/krt and bench/istio-krt.
var krtMetrics = []metricSpec{
	{name: "initial_build", target: 3},
	{name: "initial_build_pods_per_s", higherBetter: true},
	{name: "initial_build_cpu"},
	{name: "heap_inuse_delta_per_pod", target: 2},
	{name: "heap_alloc_delta_per_pod"},
	{name: "goroutines", note: "info"},
	{name: "latency_p50"},
	{name: "latency_p99", target: 3},
	{name: "latency_max"},
	{name: "latency_seen_p50"},
	{name: "latency_seen_p99"},
	{name: "latency_cpu_p50"},
	{name: "latency_cpu_p99"},
	{name: "churn_submit", note: "n/a (sync vs async)"},
	{name: "churn_total"},
	{name: "churn_throughput", higherBetter: true, target: 3},
	{name: "churn_cpu"},
	{name: "churn_handler_batches", note: "info"},
	{name: "probe_endpoint_events", note: "info"},
	{name: "probe_distinct_ips_observed", note: "info"},
	{name: "meshconfig_change_commit", note: "n/a (sync vs async)"},
	{name: "meshconfig_change"},
	{name: "meshconfig_workloads_per_s", higherBetter: true},
	{name: "meshconfig_change_cpu"},
	{name: "read_wait_p50"},
	{name: "read_wait_p99"},
	{name: "initial_build_gomaxprocs1"},
	{name: "initial_build_cpu_gomaxprocs1"},
	{name: "meshconfig_change_gomaxprocs1"},
	{name: "meshconfig_change_cpu_gomaxprocs1"},
	{name: "latency_cpu_p50_gomaxprocs1"},
	{name: "latency_cpu_p99_gomaxprocs1"},
	{name: "churn_throughput_gomaxprocs1", higherBetter: true},
	{name: "churn_cpu_gomaxprocs1"},
}

// xdsMetrics are the figures of xds/internal/bench and bench/gcp-snapshot.
var xdsMetrics = []metricSpec{
	{name: "model_build", note: "info"},
	{name: "snapshot_build", note: "info"},
	{name: "connect_all_clients_all_types"},
	{name: "connect_server_cpu"},
	{name: "connect_client_cpu"},
	{name: "connect_bytes_per_client"},
	{name: "server_heap_after_connect"},
	{name: "change_latency_p50"},
	{name: "change_latency_p99"},
	{name: "change_server_cpu_mean"},
	{name: "change_server_cpu_p50"},
	{name: "change_client_cpu_mean"},
	{name: "change_bytes_per_client_mean"},
	{name: "change_msgs_per_client_mean"},
}

// sameKind returns metrics as two builds of the same code compare them:
// without targets, which are set against another implementation, and
// with a ratio where the figures differed in kind ("info" stays).
func sameKind(metrics []metricSpec) []metricSpec {
	out := make([]metricSpec, len(metrics))
	for i, m := range metrics {
		m.target = 0
		if m.note != "info" {
			m.note = ""
		}
		out[i] = m
	}
	return out
}
