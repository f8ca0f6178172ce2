// Command loadtest holds many ADS streams open against meshd's xDS server
// while pods change, and reports what the server sustains and whether it
// gives back what the clients took once they leave.
//
// It builds the mesh model (collections.Build) over -services services
// with -pods pods, serves it on 127.0.0.1, and connects -streams raw SotW
// ADS clients. The clients run in a child process, this binary started
// again (child.go), so that the load's own process is the server's:
// server_cpu_per_change is its CPU alone, client_cpu_per_change the
// clients', process_cpu_per_change both. Each client subscribes to every
// cluster (wildcard CDS) and to the load assignments of -per-client
// clusters, and ACKs every response. For -duration, -rate pods per second
// move to a fresh IP; a client that receives a load assignment naming an
// IP it did not hold records the time since that pod was set: the
// change-to-wire latency, debounce included.
//
// It prints one "metric value unit" line per figure: pushes per second,
// latency percentiles, CPU per change, the server's RSS, heap and
// goroutines before the clients connect, at the end of the load, and
// after the clients leave. It exits non-zero when goroutines do not
// return to the baseline.
//
//	go run ./xds/internal/loadtest -streams 1000 -duration 2m
package main
