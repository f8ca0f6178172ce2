package main

import (
	"time"

	"istio.io/istio/pkg/kube/krt"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/bench/harness/workload"
)

func waitOrTimeout(ch <-chan struct{}, d time.Duration, what string, t *workload.Tracker) {
	if err := t.Await(ch, d); err != nil {
		metric.Fatalf("waiting for %s: %v", what, err)
	}
}

// observe and count adapt Istio krt's batches to the harness's handlers.
func observe(t *workload.Tracker) func([]krt.Event[workload.Endpoints]) {
	return func(events []krt.Event[workload.Endpoints]) { workload.Observe(t, events, newValue) }
}

func count(c *workload.Counter) func([]krt.Event[workload.Workload]) {
	return func(events []krt.Event[workload.Workload]) { workload.Count(c, events, newValue) }
}

func newValue[T any](e krt.Event[T]) *T { return e.New }
