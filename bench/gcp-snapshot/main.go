package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"time"

	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"

	"github.com/meshd/meshd/bench/harness/child"
	"github.com/meshd/meshd/bench/harness/metric"
)

// config is the flags.
type config struct {
	child.Fleet
	versions string
	client   string
}

func main() {
	var c config
	c.Register(flag.CommandLine)
	flag.StringVar(&c.versions, "versions", "global", "global: one version for the whole snapshot, bumped on every change; per-type: only the load assignments' version is bumped")
	flag.StringVar(&c.client, "client", "", "the client binary: xds/internal/bench built from the repository root (go build -o /tmp/xdsbench ./xds/internal/bench), run with -child")
	flag.Parse()
	if err := c.Check(); err != nil {
		metric.Fatalf("%v", err)
	}
	switch {
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
	c.EmitParams()
	metric.Emit("param_versions_"+c.versions, 1, "flag")

	w := newModel(c.N, c.M)
	snaps := newSnapshots(c.P, c.versions == "per-type")
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

	cl, err := c.Start(c.client, lis.Addr().String(), false, 0)
	if err != nil {
		return fmt.Errorf("-client: %w", err)
	}
	cl.Connect(c.P, nil)
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

// changeStats are the per-change samples.
type changeStats struct {
	latency, serverCPU, clientCPU, rebuild, setAll []time.Duration
	affected, bytes, msgs                          int64
}

// changes moves one random pod at a time to a fresh IP, rebuilding the
// whole snapshot and setting it for every node, and times each until every
// client holds the new load assignment.
func changes(c config, w *model, snaps *snapshots, cl *child.Process) error {
	rng := rand.New(rand.NewSource(c.Seed))
	var st changeStats
	for k := 1; k <= c.Changes; k++ {
		j := rng.Intn(c.M)
		ip := w.freshIP()
		cl.Send("EXPECT %d %s %s", k, clusterName(j%c.N), ip)
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
	if c.Changes > 0 {
		st.emit(c.Changes, c.P)
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
