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
