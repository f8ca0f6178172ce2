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
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
)

func main() {
	n := flag.Int("n", 1000, "number of services")
	m := flag.Int("m", 10000, "number of pods")
	p := flag.Int("p", 100, "number of connected ADS clients")
	changes := flag.Int("changes", 100, "number of single-pod IP changes to time")
	debounce := flag.Duration("debounce", 0, "the server's push debounce")
	quiet := flag.Duration("quiet", 100*time.Millisecond, "a change is settled when no client has received anything for this long")
	timeout := flag.Duration("timeout", 5*time.Minute, "timeout for any single wait")
	seed := flag.Int64("seed", 1, "seed for choosing which pods change")
	child := flag.Bool("child", false, "internal: run as the client process")
	addr := flag.String("addr", "", "internal: server address (child)")
	delta := flag.Bool("delta", false, "the clients use Delta ADS streams instead of SotW")
	subscribe := flag.Int("subscribe", 0, "each client asks by name for the listeners of this many services (and what they name), like a gRPC client dialing them; 0 asks for everything (wildcard), as the anchors' clients do")
	baseline := flag.Bool("snapshot", false, "after each change, also handle it as a go-control-plane user would (a full SnapshotCache snapshot set for every node with open watches), in this process, and report that cost")
	memProfile := flag.String("memprofile", "", "write a heap profile of the server once every client is connected to this file")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the server during the changes to this file")
	reconnect := flag.Bool("reconnect", false, "after the changes, start a second server over a model built anew from the same objects and move every client to it, first naming what it holds (as grpc-go and Envoy do), then again without; report both (reconnect_*, reconnect_fresh_*)")
	reconnectProfile := flag.String("reconnectprofile", "", "with -reconnect, write CPU profiles of the server during each reconnect to this file with .resume and .fresh appended")
	flag.Parse()
	if *n <= 0 || *m < *n || *p <= 0 {
		fatalf("need 0 < n <= m and p > 0")
	}
	if *child {
		runClients(*addr, *p, *n, *subscribe, *quiet, *delta)
		return
	}
	if *subscribe > *n {
		fatalf("need -subscribe <= n")
	}
	opt := runOptions{delta: *delta, subscribe: *subscribe, snapshot: *baseline, cpuProfile: *cpuProfile, memProfile: *memProfile,
		reconnect: *reconnect, reconnectProfile: *reconnectProfile}
	if err := run(*n, *m, *p, *changes, *debounce, *quiet, *timeout, *seed, opt); err != nil {
		fatalf("%v", err)
	}
}

func run(n, m, p, changes int, debounce, quiet, timeout time.Duration, seed int64, opt runOptions) error {
	emit("param_services", n, "count")
	emit("param_pods", m, "count")
	emit("param_clients", p, "count")
	emit("param_changes", changes, "count")
	emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	emit("param_debounce", ms(debounce), "ms")
	emit("param_delta", opt.delta, "flag")
	emit("param_subscribe", opt.subscribe, "count")

	// (a) The model and the server's serialized resources.
	base := heapAlloc()
	t0 := time.Now()
	c0 := cpuSelf()
	g := krt.NewGraph()
	mesh := meshmodel.New(g, "bench", collections.WithSidecarResources(false))
	in := mesh.Inputs
	srv := newServer(g, mesh, debounce)
	w := newWorkload(n, m)
	g.Update(func(tx *krt.Txn) {
		sources.StaticOf[*corev1.Service](in).In(tx).Set(w.services()...)
		sources.StaticOf[*corev1.Pod](in).In(tx).Set(w.pods()...)
	})
	emit("model_build", ms(time.Since(t0)), "ms")
	emit("model_build_cpu", ms(cpuSelf()-c0), "ms")
	emit("model_heap", float64(int64(heapAlloc())-int64(base))/(1<<20), "MiB")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	graphDone := make(chan error, 1)
	serveDone := make(chan error, 1)
	go func() { graphDone <- g.Run(ctx) }()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	go func() { serveDone <- srv.Serve(ctx, lis) }()
	select {
	case <-srv.Ready():
	case <-time.After(timeout):
		return fmt.Errorf("server not ready after %v", timeout)
	}

	ch := startChild([]string{"-addr", lis.Addr().String(), "-p", strconv.Itoa(p), "-n", strconv.Itoa(n),
		"-m", strconv.Itoa(m), "-quiet", quiet.String(), "-delta=" + strconv.FormatBool(opt.delta),
		"-subscribe", strconv.Itoa(opt.subscribe)}, timeout)
	ch.wait("STARTED")

	// (b) Every client connects and receives every type.
	cpu0 := cpuSelf()
	t0 = time.Now()
	ch.send("CONNECT")
	ch.wait("READY")
	connect := time.Since(t0)
	bytes, msgs, ccpu := parseSettled(ch.wait("SETTLED"))
	emit("connect_all_clients_all_types", ms(connect), "ms")
	emit("connect_server_cpu", ms(cpuSelf()-cpu0), "ms")
	emit("connect_client_cpu", ms(ccpu), "ms")
	emit("connect_bytes_per_client", float64(bytes)/float64(p), "bytes")
	emit("connect_msgs_per_client", float64(msgs)/float64(p), "count")
	emit("server_idle_cpu_per_s", ms(idleCPU(time.Second)), "ms")
	emit("server_heap_after_connect", float64(heapAlloc())/(1<<20), "MiB")
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
	rng := rand.New(rand.NewSource(seed))
	var lat, write, scpu, ccpus []time.Duration
	var totBytes, totMsgs int64
	var affected []int
	before := srv.Stats()
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
		ch.send("EXPECT %d %s %s", k, w.cluster(j%n), ip)
		affected = append(affected, parseArmed(ch.wait("ARMED")))
		c0 := cpuSelf()
		t0 := time.Now()
		in.Set(w.pod(j, ip))
		t1 := time.Now()
		ch.wait("GOT")
		lat = append(lat, time.Since(t0))
		b, mm, cc := parseSettled(ch.wait("SETTLED"))
		scpu = append(scpu, cpuSelf()-c0)
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
		s := sortDur(lat)
		emit("change_latency_p50", ms(percentile(s, 0.50)), "ms")
		emit("change_latency_p99", ms(percentile(s, 0.99)), "ms")
		emit("change_latency_max", ms(s[len(s)-1]), "ms")
		emit("change_model_update_p50", ms(percentile(sortDur(write), 0.50)), "ms")
		emit("change_server_cpu_mean", ms(meanDur(scpu)), "ms")
		emit("change_server_cpu_p50", ms(percentile(sortDur(scpu), 0.50)), "ms")
		emit("change_client_cpu_mean", ms(meanDur(ccpus)), "ms")
		emit("change_streams_affected_mean", meanInt(affected), "count")
		emit("change_bytes_all_clients_mean", float64(totBytes)/float64(changes), "bytes")
		emit("change_bytes_per_client_mean", float64(totBytes)/float64(changes)/float64(p), "bytes")
		if n := meanInt(affected); n > 0 {
			emit("change_bytes_per_affected_stream_mean", float64(totBytes)/float64(changes)/n, "bytes")
		}
		emit("change_msgs_per_client_mean", float64(totMsgs)/float64(changes)/float64(p), "count")
		var pushes, sent uint64
		for t, v := range after.Pushes {
			pushes += v - before.Pushes[t]
		}
		for t, v := range after.BytesSent {
			sent += v - before.BytesSent[t]
		}
		emit("change_server_pushes_mean", float64(pushes)/float64(changes), "count")
		emit("change_server_resource_bytes_mean", float64(sent)/float64(changes), "bytes")
		emit("change_server_push_seconds_mean", (after.PushSeconds-before.PushSeconds)/float64(changes)*1000, "ms")
		if baseline != nil {
			emit("baseline_snapshot_wall_p50", ms(percentile(sortDur(baseWall), 0.50)), "ms")
			emit("baseline_snapshot_cpu_mean", ms(meanDur(baseCPU)), "ms")
			emit("baseline_snapshot_cpu_ratio", float64(meanDur(baseCPU))/float64(meanDur(scpu)), "x")
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
	emit("server_heap_end", float64(heapAlloc())/(1<<20), "MiB")
	ch.quit()
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
	// reconnectProfile is -reconnectprofile.
	reconnectProfile string
}

// newServer returns the ADS server over mesh's sources, as the bench
// configures it: any replica it starts is configured alike.
func newServer(g *krt.Graph, mesh meshmodel.Mesh, debounce time.Duration) *xds.Server {
	return xds.New(g, mesh.Sources, xds.WithDebounce(debounce), xds.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		xds.WithGRPCServerOptions(grpc.MaxConcurrentStreams(1<<20)))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}
