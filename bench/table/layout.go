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
		metrics: []metricSpec{
			{name: "initial_build", target: 3},
			{name: "initial_build_pods_per_s", higherBetter: true},
			{name: "initial_build_cpu"},
			{name: "heap_inuse_delta_per_pod", target: 2},
			{name: "heap_alloc_delta_per_pod"},
			{name: "goroutines", note: "info"},
			{name: "latency_p50"},
			{name: "latency_p99", target: 3},
			{name: "latency_max"},
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
			{name: "meshconfig_change_gomaxprocs1"},
		},
	},
	"xds": {
		columns: []column{{"sotw", "meshd SotW"}, {"delta", "meshd Delta"}, {"gcp", "go-control-plane"}},
		ratios: []ratio{
			{theirs: "gcp", ours: "sotw", heading: "gcp ÷ meshd SotW"},
			{theirs: "gcp", ours: "delta", heading: "gcp ÷ meshd Delta"},
		},
		metrics: []metricSpec{
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
		},
	},
}
