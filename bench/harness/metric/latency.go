package metric

import (
	"slices"
	"time"
)

// EmitLatency prints the single-change latency figures both krt
// benchmarks report: latency_p50, latency_p99 and latency_max of lat,
// latency_seen_p50 and latency_seen_p99 of seen, the time to the
// handler's receipt of each change (lat adds the waiter's wake-up),
// and latency_cpu_p50 and latency_cpu_p99 of cpu, the process CPU spent
// per change. A change that waits for a core keeps its CPU figure, so
// that one shows the engine's own tail on a loaded machine. Nothing is
// printed when lat is empty.
func EmitLatency(lat, seen, cpu []time.Duration) {
	if len(lat) == 0 {
		return
	}
	Emit("latency_p50", US(Percentile(lat, 0.50)), "us")
	Emit("latency_p99", US(Percentile(lat, 0.99)), "us")
	Emit("latency_max", US(slices.Max(lat)), "us")
	Emit("latency_seen_p50", US(Percentile(seen, 0.50)), "us")
	Emit("latency_seen_p99", US(Percentile(seen, 0.99)), "us")
	Emit("latency_cpu_p50", US(Percentile(cpu, 0.50)), "us")
	Emit("latency_cpu_p99", US(Percentile(cpu, 0.99)), "us")
}
