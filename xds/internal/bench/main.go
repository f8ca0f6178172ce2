package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/bench/harness/child"
	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
)

func main() {
	var f child.Fleet
	f.Register(flag.CommandLine)
	debounce := flag.Duration("debounce", 0, "the server's push debounce")
	childMode := flag.Bool("child", false, "internal: run as the client process")
	addr := flag.String("addr", "", "internal: server address (child)")
	delta := flag.Bool("delta", false, "the clients use Delta ADS streams instead of SotW")
	subscribe := flag.Int("subscribe", 0, "each client asks by name for the listeners of this many services (and what they name), like a gRPC client dialing them; 0 asks for everything (wildcard), as the anchors' clients do")
	baseline := flag.Bool("snapshot", false, "after each change, also handle it as a go-control-plane user would (a full SnapshotCache snapshot set for every node with open watches), in this process, and report that cost")
	memProfile := flag.String("memprofile", "", "write a heap profile of the server once every client is connected to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server during the changes to this file")
	connectProfile := flag.String("connectprofile", "", "write a CPU profile of the server while the clients connect to this file")
	buildProfile := flag.String("buildprofile", "", "write a CPU profile of the model build to this file, and a heap profile after it to this file with .heap appended")
	buildStats := flag.Bool("buildstats", false, "after the model build, write to stderr per collection its size, inputs computed, seconds spent and the reads it recorded")
	reconnect := flag.Bool("reconnect", false, "after the changes, start a second server over a model built anew from the same objects and move every client to it, first naming what it holds (as grpc-go and Envoy do), then again without; report both (reconnect_*, reconnect_fresh_*)")
	reconnectProfile := flag.String("reconnectprofile", "", "with -reconnect, write CPU profiles of the server during each reconnect to this file with .resume and .fresh appended")
	flag.Parse()
	if err := f.Check(); err != nil {
		metric.Fatalf("%v", err)
	}
	if *childMode {
		runClients(*addr, f, *subscribe, *delta)
		return
	}
	if *subscribe > f.N {
		metric.Fatalf("need -subscribe <= n")
	}
	opt := runOptions{delta: *delta, subscribe: *subscribe, snapshot: *baseline, cpuProfile: *cpuProfile, memProfile: *memProfile,
		connectProfile: *connectProfile, buildProfile: *buildProfile, buildStats: *buildStats, reconnect: *reconnect, reconnectProfile: *reconnectProfile}
	if err := run(f, *debounce, opt); err != nil {
		metric.Fatalf("%v", err)
	}
}

func run(f child.Fleet, debounce time.Duration, opt runOptions) error {
	n, m, p, changes, timeout := f.N, f.M, f.P, f.Changes, f.Timeout
	f.EmitParams()
	metric.Emit("param_debounce", metric.MS(debounce), "ms")
	metric.Emit("param_delta", opt.delta, "flag")
	metric.Emit("param_subscribe", opt.subscribe, "count")

	// (a) The model and the server's serialized resources. The input
	// objects are made first, outside the build's time (making 100,000
	// corev1.Pods to convert is the bench's cost, not the model's), but
	// inside its heap, which holds them.
	base := metric.HeapAlloc()
	w := newWorkload(n, m)
	services, pods := w.services(), w.pods()
	stopBuildProfile := func() {}
	if opt.buildProfile != "" {
		var err error
		if stopBuildProfile, err = startCPUProfile(opt.buildProfile); err != nil {
			return err
		}
	}
	t0 := time.Now()
	c0 := metric.CPU()
	g := krt.NewGraph()
	mesh := meshmodel.New(g, "bench", collections.WithSidecarResources(false))
	in := mesh.Inputs
	srv := newServer(g, mesh, debounce)
	g.Update(func(tx *krt.Txn) {
		sources.StaticOf[*corev1.Service](in).In(tx).Set(services...)
		sources.StaticOf[*sources.PodInfo](in).In(tx).Set(pods...)
	})
	metric.Emit("model_build", metric.MS(time.Since(t0)), "ms")
	metric.Emit("model_build_cpu", metric.MS(metric.CPU()-c0), "ms")
	stopBuildProfile()
	metric.Emit("model_heap", float64(int64(metric.HeapAlloc())-int64(base))/(1<<20), "MiB")
	if opt.buildProfile != "" {
		if err := writeHeapProfile(opt.buildProfile + ".heap"); err != nil {
			return err
		}
	}
	if opt.buildStats {
		writeBuildStats(os.Stderr, g.Describe())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	graphDone := make(chan error, 1)
	serveDone := make(chan error, 1)
	go func() { graphDone <- g.Run(ctx) }()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	var conns ioCounts
	go func() { serveDone <- srv.Serve(ctx, countingListener{lis, &conns}) }()
	select {
	case <-srv.Ready():
	case <-time.After(timeout):
		return fmt.Errorf("server not ready after %v", timeout)
	}

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the client process: %w", err)
	}
	ch, err := f.Start(exe, lis.Addr().String(), opt.delta, opt.subscribe)
	if err != nil {
		return err
	}

	// (b) Every client connects and receives every type.
	stopConnectProfile := func() {}
	if opt.connectProfile != "" {
		if stopConnectProfile, err = startCPUProfile(opt.connectProfile); err != nil {
			return err
		}
	}
	ch.Connect(p, stopConnectProfile)
	if opt.memProfile != "" {
		if err := writeHeapProfile(opt.memProfile); err != nil {
			return err
		}
	}

	// (c) Single-pod changes.
	var baseline *snapshotBaseline
	var baseWall, baseCPU []time.Duration
	if opt.snapshot {
		baseline = newSnapshotBaseline(g, mesh.Model, w, p, opt.subscribe)
		if _, _, err := baseline.rebuild(); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewSource(f.Seed))
	var lat, write, scpu, ccpus []time.Duration
	var totBytes, totMsgs int64
	var affected []int
	before := srv.Stats()
	writes0, reads0 := conns.snapshot()
	stopProfile := func() {}
	if opt.cpuProfile != "" {
		if stopProfile, err = startCPUProfile(opt.cpuProfile); err != nil {
			return err
		}
	}
	for k := 1; k <= changes; k++ {
		j := rng.Intn(m)
		ip := w.freshIP()
		w.ips[j] = ip // the pods a replica is built from (-reconnect)
		ch.Send("EXPECT %d %s %s", k, w.cluster(j%n), ip)
		affected = append(affected, ch.Armed())
		c0 := metric.CPU()
		t0 := time.Now()
		in.Set(w.pod(j, ip))
		t1 := time.Now()
		ch.Wait("GOT")
		lat = append(lat, time.Since(t0))
		b, mm, cc := ch.Settled()
		scpu = append(scpu, metric.CPU()-c0)
		write = append(write, t1.Sub(t0))
		ccpus = append(ccpus, cc)
		totBytes += b
		if baseline != nil {
			bw, bc, err := baseline.rebuild()
			if err != nil {
				return err
			}
			baseWall, baseCPU = append(baseWall, bw), append(baseCPU, bc)
			// Collect the baseline's garbage now, so that its GC is not
			// charged to the next change (nor to the baseline: a bound).
			runtime.GC()
		}
		totMsgs += mm
	}
	stopProfile()
	if changes > 0 {
		after := srv.Stats()
		writes, reads := conns.snapshot()
		s := slices.Sorted(slices.Values(lat))
		metric.Emit("change_latency_p50", metric.MS(metric.Percentile(s, 0.50)), "ms")
		metric.Emit("change_latency_p99", metric.MS(metric.Percentile(s, 0.99)), "ms")
		metric.Emit("change_latency_max", metric.MS(s[len(s)-1]), "ms")
		metric.Emit("change_model_update_p50", metric.MS(metric.Percentile(write, 0.50)), "ms")
		metric.Emit("change_server_cpu_mean", metric.MS(metric.Mean(scpu)), "ms")
		metric.Emit("change_server_cpu_p50", metric.MS(metric.Percentile(scpu, 0.50)), "ms")
		metric.Emit("change_client_cpu_mean", metric.MS(metric.Mean(ccpus)), "ms")
		metric.Emit("change_streams_affected_mean", metric.MeanInt(affected), "count")
		metric.Emit("change_bytes_all_clients_mean", float64(totBytes)/float64(changes), "bytes")
		metric.Emit("change_bytes_per_client_mean", float64(totBytes)/float64(changes)/float64(p), "bytes")
		if n := metric.MeanInt(affected); n > 0 {
			metric.Emit("change_bytes_per_affected_stream_mean", float64(totBytes)/float64(changes)/n, "bytes")
		}
		metric.Emit("change_msgs_per_client_mean", float64(totMsgs)/float64(changes)/float64(p), "count")
		var pushes, sent uint64
		for t, v := range after.Pushes {
			pushes += v - before.Pushes[t]
		}
		for t, v := range after.BytesSent {
			sent += v - before.BytesSent[t]
		}
		metric.Emit("change_server_pushes_mean", float64(pushes)/float64(changes), "count")
		if pushes > 0 {
			metric.Emit("change_server_conn_writes_per_push", float64(writes-writes0)/float64(pushes), "count")
			metric.Emit("change_server_conn_reads_per_push", float64(reads-reads0)/float64(pushes), "count")
		}
		metric.Emit("change_server_resource_bytes_mean", float64(sent)/float64(changes), "bytes")
		metric.Emit("change_server_push_seconds_mean", (after.PushSeconds-before.PushSeconds)/float64(changes)*1000, "ms")
		if baseline != nil {
			metric.Emit("baseline_snapshot_wall_p50", metric.MS(metric.Percentile(baseWall, 0.50)), "ms")
			metric.Emit("baseline_snapshot_cpu_mean", metric.MS(metric.Mean(baseCPU)), "ms")
			metric.Emit("baseline_snapshot_cpu_ratio", float64(metric.Mean(baseCPU))/float64(metric.Mean(scpu)), "x")
		}
	}
	stop := sync.OnceValue(func() error {
		cancel()
		err := <-serveDone
		<-graphDone
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	})
	if opt.reconnect {
		r := reconnection{w: w, p: p, subscribe: opt.subscribe, debounce: debounce, timeout: timeout, rng: rng, ch: ch, profile: opt.reconnectProfile}
		if err := r.run(srv, stop); err != nil {
			return err
		}
	}
	metric.Emit("server_heap_end", float64(metric.HeapAlloc())/(1<<20), "MiB")
	ch.Quit()
	return stop()
}

// runOptions are the flags beyond the anchors' own.
type runOptions struct {
	delta      bool   // -delta
	subscribe  int    // -subscribe
	snapshot   bool   // -snapshot
	cpuProfile string // -cpuprofile
	memProfile string // -memprofile
	reconnect  bool   // -reconnect
	// connectProfile is -connectprofile, buildProfile -buildprofile.
	connectProfile, buildProfile string
	buildStats                   bool // -buildstats
	// reconnectProfile is -reconnectprofile.
	reconnectProfile string
}

// newServer returns the ADS server over mesh's sources, as the bench
// configures it: any replica it starts is configured alike. Its clients
// are served their variant, as meshd serves them.
func newServer(g *krt.Graph, mesh meshmodel.Mesh, debounce time.Duration) *xds.Server {
	return xds.New(g, mesh.Sources, xds.WithDebounce(debounce), xds.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		xds.WithGRPCServerOptions(grpc.MaxConcurrentStreams(1<<20)), xds.WithClientVariants(collections.ClientVariant))
}
