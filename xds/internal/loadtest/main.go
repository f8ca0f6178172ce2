package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/keepalive"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
)

// pingTimeoutFlag explains -ping-timeout. The clients share the server's
// process and its two cores, fifty streams to a connection: at a load
// average above 25 one of them can leave the server's keepalive ping (sent
// after 30s without a frame from it) unanswered for more than the
// server's default 10s while it works through its share of the initial
// responses. The server then closes the connection, rightly for a proxy
// that stopped answering, and the client, still writing, sees
// "connection reset by peer". A run measures the server, not that.
const pingTimeoutFlag = "how long the server waits for a keepalive ping's answer before it closes a client's connection (the server's default is 10s)"

// config is the load to apply.
type config struct {
	streams, services, pods, perClient int
	duration, debounce, maxDelay       time.Duration
	// pushMode and window are the server's xds.WithPushMode and
	// xds.WithPushWindow.
	pushMode xds.PushMode
	window   time.Duration
	// retention and retained are the registry's retention of
	// disconnected proxies (xds.WithRetention).
	retention time.Duration
	retained  int
	rate      float64
	seed      int64
	// pingTimeout is how long the server waits for a client to answer a
	// keepalive ping before it closes the connection (see pingTimeoutFlag).
	pingTimeout time.Duration
	// timeout bounds every wait: for the clients to be ready, for them to
	// leave.
	timeout time.Duration
	// profile, if set, receives a CPU profile of the load phase.
	profile io.Writer
}

// report is what a run measured, in print order.
type report struct {
	lines []line
	// goroutinesBase and goroutinesLeft are the goroutines before the
	// clients connected and after they left; deliveries the latencies
	// recorded.
	goroutinesBase, goroutinesLeft int
	deliveries                     int
	changes                        int
	// batches counts the transactions the changes went in.
	batches int
	pushes  uint64
}

type line struct {
	metric string
	value  float64
	unit   string
}

func (r *report) add(metric string, value float64, unit string) {
	r.lines = append(r.lines, line{metric, value, unit})
}

func (r *report) print(w io.Writer) {
	for _, l := range r.lines {
		fmt.Fprintf(w, "%s %s %s\n", l.metric, strconv.FormatFloat(l.value, 'f', -1, 64), l.unit)
	}
}

func main() {
	childMain()
	var c config
	flag.IntVar(&c.streams, "streams", 1000, "concurrent ADS streams")
	flag.IntVar(&c.services, "services", 1000, "services in the model")
	flag.IntVar(&c.pods, "pods", 5000, "pods in the model, spread over the services")
	flag.IntVar(&c.perClient, "per-client", 10, "load assignments each client subscribes to")
	flag.DurationVar(&c.duration, "duration", 2*time.Minute, "how long pods change")
	flag.Float64Var(&c.rate, "rate", 100, "pod changes per second")
	mode := flag.String("push-mode", string(xds.PushPaced), "how the server spaces pushes: paced or debounce")
	flag.DurationVar(&c.window, "window", 100*time.Millisecond, "paced: the server's least time between two rounds of pushes")
	flag.DurationVar(&c.debounce, "debounce", 100*time.Millisecond, "debounce: the server's push debounce")
	flag.DurationVar(&c.maxDelay, "max-delay", 10*time.Second, "debounce: the server's cap on how long a steady stream of changes delays a push; paced: the cap of its backoff")
	flag.DurationVar(&c.retention, "retention", 5*time.Minute, "how long the registry keeps a disconnected proxy")
	flag.IntVar(&c.retained, "retained", 1000, "how many disconnected proxies the registry keeps at most")
	flag.Int64Var(&c.seed, "seed", 1, "seed for choosing the pods that change")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Minute, "bound on each wait")
	flag.DurationVar(&c.pingTimeout, "ping-timeout", time.Minute, pingTimeoutFlag)
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the load phase to `FILE`")
	flag.Parse()
	c.pushMode = xds.PushMode(*mode)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest:", err)
			os.Exit(1)
		}
		defer f.Close()
		c.profile = f
	}
	r, err := run(context.Background(), c)
	if r != nil {
		r.print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) (*report, error) {
	if c.streams <= 0 || c.services <= 0 || c.pods < c.services || c.perClient <= 0 || c.rate <= 0 {
		return nil, errors.New("need streams, services, per-client and rate > 0 and pods >= services")
	}
	if c.pushMode != xds.PushPaced && c.pushMode != xds.PushDebounce {
		return nil, fmt.Errorf("-push-mode %q: want %s or %s", c.pushMode, xds.PushPaced, xds.PushDebounce)
	}
	r := &report{}
	r.add("param_streams", float64(c.streams), "count")
	r.add("param_services", float64(c.services), "count")
	r.add("param_pods", float64(c.pods), "count")
	r.add("param_rate", c.rate, "changes/s")
	r.add("param_paced", bool01(c.pushMode == xds.PushPaced), "bool")
	r.add("param_window", ms(c.window), "ms")
	r.add("param_debounce", ms(c.debounce), "ms")
	r.add("param_max_delay", ms(c.maxDelay), "ms")
	r.add("param_retained", float64(c.retained), "count")
	r.add("param_gomaxprocs", float64(runtime.GOMAXPROCS(0)), "count")

	g := krt.NewGraph()
	pipeline := meshmodel.New(g, "load", collections.WithSidecarResources(false))
	in := pipeline.Inputs
	srv := xds.New(g, pipeline.Sources, xds.WithPushMode(c.pushMode), xds.WithPushWindow(c.window),
		xds.WithDebounce(c.debounce), xds.WithMaxDelay(c.maxDelay),
		xds.WithRetention(c.retention, c.retained), xds.WithShutdownGrace(time.Second),
		xds.WithKeepalive(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: c.pingTimeout},
			keepalive.EnforcementPolicy{MinTime: 15 * time.Second, PermitWithoutStream: true}))
	m := &mesh{services: c.services, pods: c.pods}
	var objects []any
	for i := range c.services {
		objects = append(objects, m.service(i))
	}
	for j := range c.pods {
		objects = append(objects, m.pod(j, m.ip()))
	}
	in.Set(objects...) // one transaction

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	graphDone, serveDone := make(chan error, 1), make(chan error, 1)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, fmt.Errorf("listen: %w", err)
	}
	go func() { graphDone <- g.Run(ctx) }()
	go func() { serveDone <- srv.Serve(ctx, lis) }()
	stop := func() error {
		cancel()
		err := <-serveDone
		if gerr := <-graphDone; gerr != nil && !errors.Is(gerr, context.Canceled) {
			err = errors.Join(err, gerr)
		}
		return err
	}
	select {
	case <-srv.Ready():
	case <-time.After(c.timeout):
		return r, errors.Join(errors.New("server not ready"), stop())
	}

	base := sample()
	r.goroutinesBase = base.goroutines
	base.report(r, "baseline")

	t0 := time.Now()
	f, err := startClients(clientArgs{addr: lis.Addr().String(), streams: c.streams, perClient: c.perClient, service: c.services, timeout: c.timeout})
	if err != nil {
		return r, errors.Join(err, stop())
	}
	if _, err := f.await("READY"); err != nil {
		return r, errors.Join(err, f.quit(), stop())
	}
	r.add("connect_all", ms(time.Since(t0)), "ms")
	sample().report(r, "connected")

	// The load: pods move to fresh IPs at the set rate.
	rng := rand.New(rand.NewSource(c.seed))
	before := srv.Stats()
	start := time.Now()
	if err := f.load(start, c.duration); err != nil {
		return r, errors.Join(err, f.quit(), stop())
	}
	cpu0 := metric.CPU()
	if c.profile != nil {
		if err := pprof.StartCPUProfile(c.profile); err != nil {
			return r, errors.Join(err, f.quit(), stop())
		}
	}
	windows := watchWindow(srv, c.window)
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	for time.Since(start) < c.duration {
		<-tick.C
		// A write returns once the graph has taken it in; when writes
		// fall behind the rate, the changes owed by now go in one
		// transaction, as an informer's queue would deliver them.
		owed := max(1, int(c.rate*time.Since(start).Seconds())-r.changes)
		pods := make([]any, 0, owed)
		ips := make([]string, 0, owed)
		now := time.Now()
		for range owed {
			ip := m.ip()
			pods, ips = append(pods, m.pod(rng.Intn(c.pods), ip)), append(ips, ip)
		}
		in.Set(pods...)
		if err := f.changed(ips, now, time.Now()); err != nil {
			return r, errors.Join(err, f.quit(), stop())
		}
		r.changes += owed
		r.batches++
	}
	tick.Stop()
	widest, widened := windows()
	elapsed := time.Since(start)
	// Let the last round reach the clients.
	time.Sleep(max(c.debounce, c.window) + 500*time.Millisecond)
	after := srv.Stats()
	cpu := metric.CPU() - cpu0
	if c.profile != nil {
		pprof.StopCPUProfile()
	}
	got, err := f.end()
	if err != nil {
		return r, errors.Join(err, f.quit(), stop())
	}
	r.deliveries = got.deliveries
	for t, v := range after.Pushes {
		r.pushes += v - before.Pushes[t]
	}
	var sent uint64
	for t, v := range after.ResourcesSent {
		sent += v - before.ResourcesSent[t]
	}
	r.add("changes", float64(r.changes), "count")
	r.add("changes_per_s", float64(r.changes)/elapsed.Seconds(), "1/s")
	r.add("change_transactions", float64(r.batches), "count")
	r.add("pushes_per_s", float64(r.pushes)/elapsed.Seconds(), "1/s")
	r.add("resources_sent_per_s", float64(sent)/elapsed.Seconds(), "1/s")
	r.add("responses_received", float64(got.responses), "count")
	r.add("responses_per_stream_max_per_s", float64(got.maxRate), "1/s")
	// The server's process: the model, the pushes and the load's writes;
	// the clients run in their own (child.go).
	r.add("server_cpu_per_change", ms(cpu)/float64(r.changes), "ms")
	r.add("client_cpu_per_change", ms(got.cpu)/float64(r.changes), "ms")
	r.add("process_cpu_per_change", ms(cpu+got.cpu)/float64(r.changes), "ms")
	r.add("deliveries", float64(got.deliveries), "count")
	if got.deliveries > 0 {
		r.add("latency_p50", ms(got.latency[0]), "ms")
		r.add("latency_p99", ms(got.latency[1]), "ms")
		r.add("latency_max", ms(got.latency[2]), "ms")
		// From the write's return: what the push path adds to the
		// model's computation.
		r.add("push_latency_p50", ms(got.pushLatency[0]), "ms")
		r.add("push_latency_p99", ms(got.pushLatency[1]), "ms")
		r.add("push_latency_max", ms(got.pushLatency[2]), "ms")
	}
	r.add("nacks", float64(sum(after.Nacks)), "count")
	r.add("change_rounds", float64(after.ChangeRounds-before.ChangeRounds), "count")
	r.add("changed_names", float64(after.ChangedNames-before.ChangedNames), "count")
	r.add("round_notify_total", (after.NotifySeconds-before.NotifySeconds)*1000, "ms")
	r.add("push_window_end", after.PushWindowSeconds*1000, "ms")
	r.add("held_pushes", float64(after.HeldPushes-before.HeldPushes), "count")
	r.add("push_window_max", ms(widest), "ms")
	r.add("push_window_widened_share", widened, "ratio")
	sample().report(r, "end")
	ferr := got.err

	// The clients leave: streams, connections and their goroutines go.
	ferr = errors.Join(ferr, f.quit())
	t0 = time.Now()
	for srv.Stats().ConnectedProxies > 0 || runtime.NumGoroutine() > base.goroutines {
		if time.Since(t0) > c.timeout {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	left := sample()
	r.goroutinesLeft = left.goroutines
	left.report(r, "after_leave")
	r.add("leaked_goroutines", float64(left.goroutines-base.goroutines), "count")
	err = errors.Join(ferr, stop())
	if left.goroutines > base.goroutines {
		err = errors.Join(err, fmt.Errorf("%d goroutines after the clients left, %d before they came", left.goroutines, base.goroutines))
	}
	return r, err
}

// snapshot is the process's footprint at one moment.
type snapshot struct {
	goroutines int
	heap, rss  uint64
}

// sample collects garbage, returns freed memory to the OS, and measures.
func sample() snapshot {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return snapshot{goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc, rss: rss()}
}

func (s snapshot) report(r *report, phase string) {
	r.add("goroutines_"+phase, float64(s.goroutines), "count")
	r.add("heap_"+phase, mib(s.heap), "MiB")
	r.add("rss_"+phase, mib(s.rss), "MiB")
}

// watchWindow samples the server's push window every 50ms until the
// returned func is called, which returns the widest seen and the share of
// samples wider than base, the configured window.
func watchWindow(srv *xds.Server, base time.Duration) func() (widest time.Duration, widened float64) {
	done, result := make(chan struct{}), make(chan [2]float64)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var widest float64
		samples, wider := 0, 0
		for {
			select {
			case <-tick.C:
				w := srv.Stats().PushWindowSeconds
				widest, samples = max(widest, w), samples+1
				if w > base.Seconds() {
					wider++
				}
			case <-done:
				result <- [2]float64{widest, float64(wider) / float64(max(1, samples))}
				return
			}
		}
	}()
	return func() (time.Duration, float64) {
		close(done)
		r := <-result
		return time.Duration(r[0] * float64(time.Second)), r[1]
	}
}

// rss returns the resident set size from /proc, or 0 where there is none.
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(p * float64(len(sorted)-1))
	return sorted[i]
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(b uint64) float64       { return float64(b*100>>20) / 100 }
