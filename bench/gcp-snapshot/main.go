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
		fatalf("-n, -m, -p: need 0 < n <= m and p > 0")
	case c.versions != "global" && c.versions != "per-type":
		fatalf("-versions %q: want global or per-type", c.versions)
	case c.client == "":
		fatalf("-client: the path of the client binary is required (go build -o /tmp/xdsbench ./xds/internal/bench from the repository root)")
	}
	if err := run(c); err != nil {
		fatalf("%v", err)
	}
}

func run(c config) error {
	emit("param_services", c.n, "count")
	emit("param_pods", c.m, "count")
	emit("param_clients", c.p, "count")
	emit("param_changes", c.changes, "count")
	emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	emit("param_versions_"+c.versions, 1, "flag")

	w := newModel(c.n, c.m)
	snaps := newSnapshots(c.p, c.versions == "per-type")
	base := heapAlloc()
	t0 := time.Now()
	snap, err := snaps.build(w)
	if err != nil {
		return err
	}
	emit("snapshot_build", ms(time.Since(t0)), "ms")
	emit("snapshot_heap", mib(heapAlloc()-base), "MiB")
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

	cl, err := startClients(c.client, []string{"-addr", lis.Addr().String(), "-p", strconv.Itoa(c.p), "-n", strconv.Itoa(c.n),
		"-m", strconv.Itoa(c.m), "-quiet", c.quiet.String(), "-delta=false", "-subscribe", "0"}, c.timeout)
	if err != nil {
		return err
	}
	cl.wait("STARTED")
	connect(cl, c.p)
	if err := changes(c, w, snaps, cl); err != nil {
		return err
	}
	emit("server_heap_end", mib(heapAlloc()), "MiB")
	cl.quit()
	gs.Stop()
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// connect has every client connect and waits until all hold every type.
func connect(cl *clients, p int) {
	cpu0, t0 := cpuSelf(), time.Now()
	cl.send("CONNECT")
	cl.wait("READY")
	wall := time.Since(t0)
	bytes, msgs, clientCPU := cl.settled()
	emit("connect_all_clients_all_types", ms(wall), "ms")
	emit("connect_server_cpu", ms(cpuSelf()-cpu0), "ms")
	emit("connect_client_cpu", ms(clientCPU), "ms")
	emit("connect_bytes_per_client", float64(bytes)/float64(p), "bytes")
	emit("connect_msgs_per_client", float64(msgs)/float64(p), "count")
	idle0 := cpuSelf()
	time.Sleep(time.Second)
	emit("server_idle_cpu_per_s", ms(cpuSelf()-idle0), "ms")
	emit("server_heap_after_connect", mib(heapAlloc()), "MiB")
}

// changeStats are the per-change samples.
type changeStats struct {
	latency, serverCPU, clientCPU, rebuild, setAll []time.Duration
	affected, bytes, msgs                          int64
}

// changes moves one random pod at a time to a fresh IP, rebuilding the
// whole snapshot and setting it for every node, and times each until every
// client holds the new load assignment.
func changes(c config, w *model, snaps *snapshots, cl *clients) error {
	rng := rand.New(rand.NewSource(c.seed))
	var st changeStats
	for k := 1; k <= c.changes; k++ {
		j := rng.Intn(c.m)
		ip := w.freshIP()
		cl.send("EXPECT %d %s %s", k, clusterName(j%c.n), ip)
		st.affected += int64(cl.armed())
		c0, t0 := cpuSelf(), time.Now()
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
		cl.wait("GOT")
		st.latency = append(st.latency, time.Since(t0))
		b, msgs, ccpu := cl.settled()
		st.serverCPU = append(st.serverCPU, cpuSelf()-c0)
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
	emit("change_latency_p50", ms(percentile(st.latency, 0.50)), "ms")
	emit("change_latency_p99", ms(percentile(st.latency, 0.99)), "ms")
	emit("change_latency_max", ms(percentile(st.latency, 1)), "ms")
	emit("change_server_cpu_mean", ms(mean(st.serverCPU)), "ms")
	emit("change_server_cpu_p50", ms(percentile(st.serverCPU, 0.50)), "ms")
	emit("change_client_cpu_mean", ms(mean(st.clientCPU)), "ms")
	emit("change_streams_affected_mean", perChange(st.affected), "count")
	emit("change_bytes_all_clients_mean", perChange(st.bytes), "bytes")
	emit("change_bytes_per_client_mean", perChange(st.bytes)/float64(p), "bytes")
	if st.affected > 0 {
		emit("change_bytes_per_affected_stream_mean", float64(st.bytes)/float64(st.affected), "bytes")
	}
	emit("change_msgs_per_client_mean", perChange(st.msgs)/float64(p), "count")
	emit("change_snapshot_rebuild_p50", ms(percentile(st.rebuild, 0.50)), "ms")
	emit("change_set_snapshot_all_nodes_p50", ms(percentile(st.setAll, 0.50)), "ms")
}
