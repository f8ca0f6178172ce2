module github.com/meshd/meshd/bench/limit

go 1.26.8

require github.com/meshd/meshd/bench/harness v0.1.0

// The workload and the metric lines are bench/krt's, from bench/harness.
replace github.com/meshd/meshd/bench/harness => ../harness
