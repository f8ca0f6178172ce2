package metric_test

import (
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
)

func ExampleEmit() {
	metric.Emit("param_pods", 10000, "count")
	metric.Emit("initial_build", metric.MS(1234567*time.Microsecond), "ms")
	metric.Emit("result", "PASS", "status")
	// Output:
	// param_pods 10000 count
	// initial_build 1234.567 ms
	// result PASS status
}

func ExampleEmitLatency() {
	lat := []time.Duration{30 * time.Microsecond, 10 * time.Microsecond, 20 * time.Microsecond}
	seen := []time.Duration{28 * time.Microsecond, 9 * time.Microsecond, 18 * time.Microsecond}
	cpu := []time.Duration{9 * time.Microsecond, 8 * time.Microsecond, 7 * time.Microsecond}
	metric.EmitLatency(lat, seen, cpu)
	metric.EmitLatency(nil, nil, nil)
	// Output:
	// latency_p50 20.000 us
	// latency_p99 30.000 us
	// latency_max 30.000 us
	// latency_seen_p50 18.000 us
	// latency_seen_p99 28.000 us
	// latency_cpu_p50 8.000 us
	// latency_cpu_p99 9.000 us
}
