package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"runtime"
	"strconv"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/bench/harness/child"
	"github.com/meshd/meshd/bench/harness/metric"
)

// config is the flags.
type config struct {
	n, m, p, changes int
	quiet, timeout   time.Duration
	seed             int64
	versions         string
	client           string
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1000, "number of services")
	flag.IntVar(&c.m, "m", 10000, "number of pods")
	flag.IntVar(&c.p, "p", 100, "number of connected ADS clients")
	flag.IntVar(&c.changes, "changes", 100, "number of single-pod IP changes to time")
	flag.DurationVar(&c.quiet, "quiet", 100*time.Millisecond, "a change is settled when no client has received anything for this long")
	flag.DurationVar(&c.timeout, "timeout", 5*time.Minute, "timeout for any single wait")
	flag.Int64Var(&c.seed, "seed", 1, "seed for choosing which pods change")
	flag.StringVar(&c.versions, "versions", "global", "global: one version for the whole snapshot, bumped on every change; per-type: only the load assignments' version is bumped")
	flag.StringVar(&c.client, "client", "", "the client binary: xds/internal/bench built from the repository root (go build -o /tmp/xdsbench ./xds/internal/bench), run with -child")
	flag.Parse()
	switch {
	case c.n <= 0 || c.m < c.n || c.p <= 0:
		metric.Fatalf("-n, -m, -p: need 0 < n <= m and p > 0")
	case c.versions != "global" && c.versions != "per-type":
		metric.Fatalf("-versions %q: want global or per-type", c.versions)
	case c.client == "":
		metric.Fatalf("-client: the path of the client binary is required (go build -o /tmp/xdsbench ./xds/internal/bench from the repository root)")
	}
	if err := run(c); err != nil {
		metric.Fatalf("%v", err)
	}
}

func run(c config) error {
	metric.Emit("param_services", c.n, "count")
	metric.Emit("param_pods", c.m, "count")
	metric.Emit("param_clients", c.p, "count")
	metric.Emit("param_changes", c.changes, "count")
	metric.Emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	metric.Emit("param_versions_"+c.versions, 1, "flag")

	w := newModel(c.n, c.m)
	snaps := newSnapshots(c.p, c.versions == "per-type")
	base := metric.HeapAlloc()
	t0 := time.Now()
	snap, err := snaps.build(w)
	if err != nil {
		return err
	}
	metric.Emit("snapshot_build", metric.MS(time.Since(t0)), "ms")
	metric.Emit("snapshot_heap", metric.MiB(metric.HeapAlloc()-base), "MiB")
	if err := snaps.setAll(snap); err != nil {
		return err
	}

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gs := grpc.NewServer(grpc.MaxConcurrentStreams(1 << 20))
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(gs, serverv3.NewServer(ctx, snaps.cache, nil))
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()

	cl, err := child.Start(c.client, []string{"-addr", lis.Addr().String(), "-p", strconv.Itoa(c.p), "-n", strconv.Itoa(c.n),
		"-m", strconv.Itoa(c.m), "-quiet", c.quiet.String(), "-delta=false", "-subscribe", "0"}, c.timeout)
	if err != nil {
		return fmt.Errorf("-client: %w", err)
	}
	cl.Wait("STARTED")
	connect(cl, c.p)
	if err := changes(c, w, snaps, cl); err != nil {
		return err
	}
	metric.Emit("server_heap_end", metric.MiB(metric.HeapAlloc()), "MiB")
	cl.Quit()
	gs.Stop()
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// connect has every client connect and waits until all hold every type.
func connect(cl *child.Process, p int) {
	cpu0, t0 := metric.CPU(), time.Now()
	cl.Send("CONNECT")
	cl.Wait("READY")
	wall := time.Since(t0)
	bytes, msgs, clientCPU := cl.Settled()
	metric.Emit("connect_all_clients_all_types", metric.MS(wall), "ms")
	metric.Emit("connect_server_cpu", metric.MS(metric.CPU()-cpu0), "ms")
	metric.Emit("connect_client_cpu", metric.MS(clientCPU), "ms")
	metric.Emit("connect_bytes_per_client", float64(bytes)/float64(p), "bytes")
	metric.Emit("connect_msgs_per_client", float64(msgs)/float64(p), "count")
	idle0 := metric.CPU()
	time.Sleep(time.Second)
	metric.Emit("server_idle_cpu_per_s", metric.MS(metric.CPU()-idle0), "ms")
	metric.Emit("server_heap_after_connect", metric.MiB(metric.HeapAlloc()), "MiB")
}

// changeStats are the per-change samples.
type changeStats struct {
	latency, serverCPU, clientCPU, rebuild, setAll []time.Duration
	affected, bytes, msgs                          int64
}

// changes moves one random pod at a time to a fresh IP, rebuilding the
// whole snapshot and setting it for every node, and times each until every
// client holds the new load assignment.
func changes(c config, w *model, snaps *snapshots, cl *child.Process) error {
	rng := rand.New(rand.NewSource(c.seed))
	var st changeStats
	for k := 1; k <= c.changes; k++ {
		j := rng.Intn(c.m)
		ip := w.freshIP()
		cl.Send("EXPECT %d %s %s", k, clusterName(j%c.n), ip)
		st.affected += int64(cl.Armed())
		c0, t0 := metric.CPU(), time.Now()
		w.ips[j] = ip
		snap, err := snaps.build(w)
		if err != nil {
			return err
		}
		t1 := time.Now()
		if err := snaps.setAll(snap); err != nil {
			return err
		}
		t2 := time.Now()
		cl.Wait("GOT")
		st.latency = append(st.latency, time.Since(t0))
		b, msgs, ccpu := cl.Settled()
		st.serverCPU = append(st.serverCPU, metric.CPU()-c0)
		st.clientCPU = append(st.clientCPU, ccpu)
		st.rebuild, st.setAll = append(st.rebuild, t1.Sub(t0)), append(st.setAll, t2.Sub(t1))
		st.bytes += b
		st.msgs += msgs
	}
	if c.changes > 0 {
		st.emit(c.changes, c.p)
	}
	return nil
}

func (st *changeStats) emit(changes, p int) {
	perChange := func(v int64) float64 { return float64(v) / float64(changes) }
	metric.Emit("change_latency_p50", metric.MS(metric.Percentile(st.latency, 0.50)), "ms")
	metric.Emit("change_latency_p99", metric.MS(metric.Percentile(st.latency, 0.99)), "ms")
	metric.Emit("change_latency_max", metric.MS(metric.Percentile(st.latency, 1)), "ms")
	metric.Emit("change_server_cpu_mean", metric.MS(metric.Mean(st.serverCPU)), "ms")
	metric.Emit("change_server_cpu_p50", metric.MS(metric.Percentile(st.serverCPU, 0.50)), "ms")
	metric.Emit("change_client_cpu_mean", metric.MS(metric.Mean(st.clientCPU)), "ms")
	metric.Emit("change_streams_affected_mean", perChange(st.affected), "count")
	metric.Emit("change_bytes_all_clients_mean", perChange(st.bytes), "bytes")
	metric.Emit("change_bytes_per_client_mean", perChange(st.bytes)/float64(p), "bytes")
	if st.affected > 0 {
		metric.Emit("change_bytes_per_affected_stream_mean", float64(st.bytes)/float64(st.affected), "bytes")
	}
	metric.Emit("change_msgs_per_client_mean", perChange(st.msgs)/float64(p), "count")
	metric.Emit("change_snapshot_rebuild_p50", metric.MS(metric.Percentile(st.rebuild, 0.50)), "ms")
	metric.Emit("change_set_snapshot_all_nodes_p50", metric.MS(metric.Percentile(st.setAll, 0.50)), "ms")
}
