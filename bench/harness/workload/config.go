package workload

import (
	"errors"
	"flag"
	"time"
)

// Config is the run of the workload bench/krt and bench/istio-krt share:
// the same flags, so that the two outputs compare line by line.
type Config struct {
	N, M                                       int
	LatencyChanges, ChurnChanges, ProbeChanges int
	SvcLookup, Build                           string
	MeshChange                                 bool
	Timeout                                    time.Duration
	Seed                                       int64
}

// Register defines the flags of c on fs, with their defaults. svcLookup
// says what each -svc-lookup mode means on the engine at hand.
func (c *Config) Register(fs *flag.FlagSet, svcLookup string) {
	fs.IntVar(&c.N, "n", 1000, "number of services")
	fs.IntVar(&c.M, "m", 10000, "number of pods")
	fs.IntVar(&c.LatencyChanges, "latency-changes", 2000, "single-change latency samples (enough for p99 not to be one of the two slowest)")
	fs.IntVar(&c.ChurnChanges, "churn-changes", 10000, "pod IP changes in the churn phase")
	fs.IntVar(&c.ProbeChanges, "probe-changes", 100, "back-to-back changes of one pod, to see whether handlers observe intermediate states")
	fs.StringVar(&c.SvcLookup, "svc-lookup", "ns", "how workloads find their services: "+svcLookup)
	fs.StringVar(&c.Build, "build", "bulk", "initial build mode: bulk (inputs filled, then derived collections created) or incremental (derived collections on empty inputs, then one update per input)")
	fs.BoolVar(&c.MeshChange, "mesh-change", true, "run the mesh-config change phase")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Minute, "timeout for any single wait")
	fs.Int64Var(&c.Seed, "seed", 1, "seed for choosing which pods change")
}

// Check returns an error naming the flag of the first value c cannot run
// with.
func (c *Config) Check() error {
	switch {
	case c.N <= 0 || c.M < c.N:
		return errors.New("-n, -m: need 0 < n <= m")
	case c.Build != "bulk" && c.Build != "incremental":
		return errors.New("-build " + c.Build + ": want bulk or incremental")
	}
	return nil
}
