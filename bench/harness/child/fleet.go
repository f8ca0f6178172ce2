package child

import (
	"errors"
	"flag"
	"runtime"
	"strconv"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
)

// Fleet is the run xds/internal/bench and bench/gcp-snapshot share: the
// same workload, clients and changes under the same flags, so that their
// outputs compare line by line.
type Fleet struct {
	// N services, M pods, P clients and Changes single-pod IP changes.
	N, M, P, Changes int
	// Quiet is how long no client may receive anything for a change to
	// count as settled; Timeout bounds any single wait.
	Quiet, Timeout time.Duration
	// Seed chooses which pods change.
	Seed int64
	// StaticWindows has the clients fix their HTTP/2 flow-control
	// windows, as Envoy does. grpc-go's clients otherwise estimate the
	// bandwidth and send a PING after DATA frames, which the server must
	// answer: a second write per push that Envoy never asks for.
	StaticWindows bool
}

// Register defines the flags of f on fs, with their defaults.
func (f *Fleet) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.N, "n", 1000, "number of services")
	fs.IntVar(&f.M, "m", 10000, "number of pods")
	fs.IntVar(&f.P, "p", 100, "number of connected ADS clients")
	fs.IntVar(&f.Changes, "changes", 100, "number of single-pod IP changes to time")
	fs.DurationVar(&f.Quiet, "quiet", 100*time.Millisecond, "a change is settled when no client has received anything for this long")
	fs.DurationVar(&f.Timeout, "timeout", 5*time.Minute, "timeout for any single wait")
	fs.Int64Var(&f.Seed, "seed", 1, "seed for choosing which pods change")
	fs.BoolVar(&f.StaticWindows, "static-windows", false, "the clients fix their HTTP/2 windows as Envoy does, so send no bandwidth-estimation PINGs for the server to answer")
}

// Check returns an error naming the flags of a run f cannot make.
func (f *Fleet) Check() error {
	if f.N <= 0 || f.M < f.N || f.P <= 0 {
		return errors.New("-n, -m, -p: need 0 < n <= m and p > 0")
	}
	return nil
}

// EmitParams prints the run's parameters as param_* lines.
func (f *Fleet) EmitParams() {
	metric.Emit("param_services", f.N, "count")
	metric.Emit("param_pods", f.M, "count")
	metric.Emit("param_clients", f.P, "count")
	metric.Emit("param_changes", f.Changes, "count")
	metric.Emit("param_static_windows", f.StaticWindows, "flag")
	metric.Emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
}

// Start runs the client process bin with f's P clients of the N services
// against the server at addr, over Delta streams when delta is set, each
// asking for subscribe services by name (0: everything). It waits for
// the child's STARTED.
func (f *Fleet) Start(bin, addr string, delta bool, subscribe int) (*Process, error) {
	p, err := Start(bin, []string{"-addr", addr, "-p", strconv.Itoa(f.P), "-n", strconv.Itoa(f.N),
		"-m", strconv.Itoa(f.M), "-quiet", f.Quiet.String(), "-delta=" + strconv.FormatBool(delta),
		"-subscribe", strconv.Itoa(subscribe), "-static-windows=" + strconv.FormatBool(f.StaticWindows)}, f.Timeout)
	if err != nil {
		return nil, err
	}
	p.Wait("STARTED")
	return p, nil
}

// Connect has the child's p clients connect and waits until every one
// holds every type; then it prints the connect_* figures, the server's
// CPU over an idle second and its heap. ready, when not nil, runs as soon
// as the clients are ready, before the figures are read (to stop a
// profile, say).
func (c *Process) Connect(p int, ready func()) {
	cpu0, t0 := metric.CPU(), time.Now()
	c.Send("CONNECT")
	c.Wait("READY")
	wall := time.Since(t0)
	if ready != nil {
		ready()
	}
	bytes, msgs, clientCPU := c.Settled()
	metric.Emit("connect_all_clients_all_types", metric.MS(wall), "ms")
	metric.Emit("connect_server_cpu", metric.MS(metric.CPU()-cpu0), "ms")
	metric.Emit("connect_client_cpu", metric.MS(clientCPU), "ms")
	metric.Emit("connect_bytes_per_client", float64(bytes)/float64(p), "bytes")
	metric.Emit("connect_msgs_per_client", float64(msgs)/float64(p), "count")
	metric.Emit("server_idle_cpu_per_s", metric.MS(metric.IdleCPU(time.Second)), "ms")
	metric.Emit("server_heap_after_connect", metric.MiB(metric.HeapAlloc()), "MiB")
}
