package main

import (
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

// snapshot reads the inputs and outputs workload.Verify checks. Istio's
// collections are read one after the other, not at one version, and derive
// asynchronously: a mismatch may be a state still propagating, which
// verifyEventually retries.
func (gr *graph) snapshot() workload.Snapshot {
	return workload.Snapshot{Pods: gr.pods.List(), Workloads: gr.workloads.List(), Endpoints: gr.endpoints.List()}
}

// verifyEventually retries workload.Verify for up to d and returns the
// retries it needed; it ends the run when the outputs never agree.
func verifyEventually(gr *graph, n, m int, trustDomain string, d time.Duration, what string) int {
	retries, err := workload.VerifyEventually(gr.snapshot, n, m, trustDomain, d)
	if err != nil {
		metric.Fatalf("VERIFY FAILED (%s): %v", what, err)
	}
	return retries
}
