package main

import (
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
	"github.com/meshd/meshd/krt"
)

// snapshot reads the inputs and outputs workload.Verify checks, all at one
// committed version.
func (gr *graph) snapshot() workload.Snapshot {
	var s workload.Snapshot
	gr.g.Read(func(snap *krt.Snapshot) {
		s = workload.Snapshot{Pods: gr.pods.At(snap).List(), Workloads: gr.workloads.At(snap).List(), Endpoints: gr.endpoints.At(snap).List()}
	})
	return s
}

// verify checks every output against a from-scratch computation from the
// inputs.
func verify(gr *graph, n, m int, trustDomain string) error {
	return workload.Verify(gr.snapshot(), n, m, trustDomain)
}

// verifyEventually retries verify for up to d and returns the retries it
// needed. krt commits synchronously, so any retry at all is a finding; the
// loop is there to report the same metric as bench/istio-krt.
func verifyEventually(gr *graph, n, m int, trustDomain string, d time.Duration, what string) int {
	retries, err := workload.VerifyEventually(gr.snapshot, n, m, trustDomain, d)
	if err != nil {
		metric.Fatalf("VERIFY FAILED (%s): %v", what, err)
	}
	return retries
}
