package main

// -reconnect: a replica's proxies moving to another.
//
// When a replica dies, every proxy it served reconnects at once to the
// survivors. Versions are digests of content, so a survivor serving the
// same config can tell a proxy that names what it holds — SotW
// version_info on its first request of each type, Delta
// initial_resource_versions — that it holds the current config, and send
// nothing. This phase measures that against the same clients reconnecting
// without naming anything.
//
// The second server runs in the parent beside the first, over its own
// graph and a model built anew from the workload's current objects (the
// changes included), so nothing but content is shared. The clients drop
// their streams, and the first server stops once it has seen them go (its
// teardown is not charged, and the survivor's heap holds one model, as it
// would); then the clients open new streams to the second server, each on
// a connection of its own, asking at once for every type with the names
// they hold. The fresh baseline repeats the move from the second server
// to itself.
//
// A reconnect is complete when every stream on the second server holds
// every type, each either resumed (Stats.Resumed, TypeStatus.Resumed) or
// answered with its last response acknowledged and nothing pending. The
// parent polls the cheap Stats until their counts allow that, then checks
// each stream's status; the clients ask for every name at once and the
// config does not change meanwhile, so no request is still in flight.

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"net"
	"os"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/bench/harness/child"
	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/xds"
	"github.com/meshd/meshd/xds/internal/meshmodel"
)

// reconnection is the -reconnect phase, run by the parent after the
// changes.
type reconnection struct {
	w                 *workload
	p, subscribe      int
	debounce, timeout time.Duration
	rng               *rand.Rand
	ch                *child.Process
	// profile, when set, names the CPU profiles of each reconnect:
	// profile.resume and profile.fresh.
	profile string
}

// run starts the replica, moves the clients from first to it naming what
// they hold (reconnect_*), then once more without (reconnect_fresh_*),
// checking after each move that a pod change reaches the clients from the
// replica. Once its clients have left, the first server and its graph
// stop (stopFirst), as a dead replica's would, so that the replica's
// garbage collector marks one model, not two, while they reconnect.
func (r *reconnection) run(first *xds.Server, stopFirst func() error) error {
	c0, t0 := metric.CPU(), time.Now()
	rep, err := startReplica(r.w, r.debounce, r.timeout)
	if err != nil {
		return err
	}
	metric.Emit("reconnect_model_build", metric.MS(time.Since(t0)), "ms")
	metric.Emit("reconnect_model_build_cpu", metric.MS(metric.CPU()-c0), "ms")
	metric.Emit("server_heap_two_models", float64(metric.HeapAlloc())/(1<<20), "MiB")

	if err := r.drop(first); err != nil {
		return err
	}
	if err := stopFirst(); err != nil {
		return err
	}
	if err := r.move(rep, true, "reconnect_"); err != nil {
		return err
	}
	if err := r.drop(rep.srv); err != nil {
		return err
	}
	if err := r.move(rep, false, "reconnect_fresh_"); err != nil {
		return err
	}
	// The replica stops before the child: drop the streams first, so that
	// the clients do not see them broken.
	if err := r.drop(rep.srv); err != nil {
		return err
	}
	return rep.stop()
}

// drop ends every client's stream, and waits until srv has seen them end,
// so that their teardown is charged to no measurement.
func (r *reconnection) drop(srv *xds.Server) error {
	r.ch.Send("DROP")
	r.ch.Wait("DROPPED")
	return waitStreams(srv, 0, r.timeout)
}

// move reconnects every client, its stream dropped, to rep.
func (r *reconnection) move(rep *replica, resume bool, prefix string) error {
	// Both moves start from a collected heap.
	metric.Emit(prefix+"server_heap", float64(metric.HeapAlloc())/(1<<20), "MiB")
	mode := "fresh"
	if resume {
		mode = "resume"
	}
	stopProfile := func() {}
	if r.profile != "" {
		var err error
		if stopProfile, err = startCPUProfile(r.profile + "." + mode); err != nil {
			return err
		}
	}
	before := rep.srv.Stats()
	c0, t0 := metric.CPU(), time.Now()
	r.ch.Send("RECONNECT %s %s", rep.addr, mode)
	got, err := waitSettled(rep.srv, before, r.p, r.timeout)
	if err != nil {
		return fmt.Errorf("reconnect (%s): %w", mode, err)
	}
	wall, cpu := time.Since(t0), metric.CPU()-c0
	stopProfile()
	r.ch.Send("COUNT")
	bytes, msgs, ccpu := r.ch.Settled()
	p := float64(r.p)
	metric.Emit(prefix+"all_clients", metric.MS(wall), "ms")
	metric.Emit(prefix+"server_cpu", metric.MS(cpu), "ms")
	metric.Emit(prefix+"client_cpu", metric.MS(ccpu), "ms")
	metric.Emit(prefix+"bytes_per_client", float64(bytes)/p, "bytes")
	metric.Emit(prefix+"msgs_per_client", float64(msgs)/p, "count")
	metric.Emit(prefix+"types_resumed", got.resumed, "count")
	metric.Emit(prefix+"types_answered", got.answered, "count")
	metric.Emit(prefix+"check_wall", metric.MS(got.check), "ms")
	if resume && got.resumed != 4*r.p {
		// Identical config on both servers: every type of every stream
		// should have resumed.
		fmt.Fprintf(os.Stderr, "WARNING: %d of %d stream types resumed; not resumed: %v\n", got.resumed, 4*r.p, got.notResumed)
	}

	// The replica must serve the moved streams from here on: one more pod
	// change has to reach every client holding its load assignment.
	lat, affected, err := r.change(rep)
	if err != nil {
		return fmt.Errorf("after reconnect (%s): %w", mode, err)
	}
	metric.Emit(prefix+"change_latency", metric.MS(lat), "ms")
	metric.Emit(prefix+"change_streams_affected", affected, "count")
	return nil
}

// change moves one pod, of a service some client holds, in the replica's
// model, and waits until every client holding its cluster has the new
// address.
func (r *reconnection) change(rep *replica) (time.Duration, int, error) {
	w := r.w
	svc := r.rng.Intn(w.n)
	if r.subscribe > 0 {
		svcs := subscribedServices(r.rng.Intn(r.p), r.subscribe, w.n)
		svc = svcs[r.rng.Intn(len(svcs))]
	}
	j := svc + w.n*r.rng.Intn(w.m/w.n) // a pod of svc: j%n == svc, j < m
	ip := w.freshIP()
	w.ips[j] = ip
	r.ch.Send("EXPECT 0 %s %s", w.cluster(svc), ip)
	affected := r.ch.Armed()
	if affected == 0 {
		return 0, 0, fmt.Errorf("no client holds %s", w.cluster(svc))
	}
	t0 := time.Now()
	rep.in.Set(w.pod(j, ip))
	r.ch.Wait("GOT") // fails the run after -timeout
	lat := time.Since(t0)
	r.ch.Wait("SETTLED")
	return lat, affected, nil
}

// replica is a second server, in this process, over a graph and a model of
// its own built from the workload's current objects.
type replica struct {
	in                   sources.StaticInputs
	srv                  *xds.Server
	addr                 string
	cancel               context.CancelFunc
	serveDone, graphDone chan error
}

func startReplica(w *workload, debounce, timeout time.Duration) (*replica, error) {
	g := krt.NewGraph()
	mesh := meshmodel.New(g, "bench", collections.WithSidecarResources(false))
	srv := newServer(g, mesh, debounce)
	g.Update(func(tx *krt.Txn) {
		sources.StaticOf[*corev1.Service](mesh.Inputs).In(tx).Set(w.services()...)
		sources.StaticOf[*sources.PodInfo](mesh.Inputs).In(tx).Set(w.pods()...)
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("replica: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{in: mesh.Inputs, srv: srv, addr: lis.Addr().String(), cancel: cancel,
		serveDone: make(chan error, 1), graphDone: make(chan error, 1)}
	go func() { r.graphDone <- g.Run(ctx) }()
	go func() { r.serveDone <- srv.Serve(ctx, lis) }()
	select {
	case <-srv.Ready():
		return r, nil
	case <-time.After(timeout):
		r.stop()
		return nil, fmt.Errorf("replica not ready after %v", timeout)
	}
}

func (r *replica) stop() error {
	r.cancel()
	err := <-r.serveDone
	<-r.graphDone
	if err != nil {
		return fmt.Errorf("replica: serve: %w", err)
	}
	return nil
}

// waitStreams waits until srv has n streams open.
func waitStreams(srv *xds.Server, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for srv.Stats().ConnectedProxies != n {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d streams open after %v, want %d", srv.Stats().ConnectedProxies, timeout, n)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// benchTypes are the short names (Stats keys) of the four types every
// client asks for.
var benchTypes = []string{"lds", "rds", "cds", "eds"}

// settled counts a finished reconnect's stream types by how they ended.
type settled struct {
	resumed, answered int
	// notResumed describes the first few answered ones.
	notResumed []string
	// check is the time spent reading the streams' status (Proxies),
	// charged to the reconnect's wall and CPU time alike.
	check time.Duration
}

// waitSettled waits until p streams are open on srv and every one holds
// every type, resumed or answered and acknowledged, with nothing pending.
// before is srv's Stats before the reconnect.
func waitSettled(srv *xds.Server, before xds.Stats, p int, timeout time.Duration) (settled, error) {
	deadline := time.Now().Add(timeout)
	var last string
	var check time.Duration
	for time.Now().Before(deadline) {
		s := srv.Stats()
		var err error
		if last, err = countsSettled(s, before, p); err != nil {
			return settled{}, err
		}
		if last == "" {
			t0 := time.Now()
			got, why := streamsSettled(srv.Proxies(), p)
			check += time.Since(t0)
			if why == "" {
				got.check = check
				return got, nil
			}
			last = why
		}
		time.Sleep(time.Millisecond)
	}
	return settled{}, fmt.Errorf("not settled after %v: %s", timeout, last)
}

// countsSettled tells from srv's counters (since before) whether every
// stream can be settled: p streams open and, per type, a resume or an ACK
// for each and every response acknowledged. It returns what is missing,
// "" when nothing is, and an error on a NACK, which the bench's clients
// never send.
func countsSettled(s, before xds.Stats, p int) (string, error) {
	if s.ConnectedProxies != p {
		return fmt.Sprintf("%d of %d streams open", s.ConnectedProxies, p), nil
	}
	for _, t := range benchTypes {
		if n := s.Nacks[t] - before.Nacks[t]; n > 0 {
			return "", fmt.Errorf("%d %s NACKs", n, t)
		}
		resumed := s.Resumed[t] - before.Resumed[t]
		acks := s.Acks[t] - before.Acks[t]
		pushes := s.Pushes[t] - before.Pushes[t]
		if resumed+acks < uint64(p) || acks != pushes {
			return fmt.Sprintf("%s: %d resumed, %d of %d responses acknowledged", t, resumed, acks, pushes), nil
		}
	}
	return "", nil
}

// streamsSettled checks every open stream: each of its four types either
// resumed, with no response since, or with its last response acknowledged,
// and nothing pending. It returns what is missing, "" when nothing is.
func streamsSettled(proxies []xds.ProxyStatus, p int) (settled, string) {
	var got settled
	open := 0
	for _, px := range proxies {
		if !px.Connected {
			continue
		}
		open++
		for _, t := range []string{xds.ListenerType, xds.RouteType, xds.ClusterType, xds.EndpointType} {
			ts, ok := px.Types[t]
			switch {
			case !ok:
				return got, fmt.Sprintf("%s has not asked for %s", px.NodeID, t)
			case ts.Pending > 0:
				return got, fmt.Sprintf("%s: %d %s names pending", px.NodeID, ts.Pending, t)
			case ts.SentNonce == "" && ts.Resumed:
				got.resumed++
			case ts.SentNonce != "" && ts.AckedNonce == ts.SentNonce:
				got.answered++
				if len(got.notResumed) < 5 {
					got.notResumed = append(got.notResumed, fmt.Sprintf("%s %s (%d resources, version %s)", px.NodeID, t, ts.Resources, ts.SentVersion))
				}
			default:
				return got, fmt.Sprintf("%s: %s neither resumed nor acknowledged", px.NodeID, t)
			}
		}
	}
	if open != p {
		return got, fmt.Sprintf("%d of %d streams open", open, p)
	}
	return got, ""
}

// Child side.

// drop ends every client's stream, as when its server dies, and waits
// until each has stopped receiving.
func (f *fleet) drop() {
	for _, c := range f.clients {
		c.cancel()
	}
	for _, c := range f.clients {
		<-c.done
		if c.out != nil {
			close(c.out)
			c.out = nil
		}
		if c.dout != nil {
			close(c.dout)
			c.dout = nil
		}
		c.cc.Close()
	}
}

// reconnect opens a new stream for every client, to addr, naming what it
// holds when resume is set.
func (f *fleet) reconnect(ctx context.Context, addr string, resume, delta bool) {
	for i, c := range f.clients {
		go func() {
			if err := c.opener(delta)(ctx, addr, true, resume); err != nil {
				metric.Fatalf("client %d: reconnect: %v", i, err)
			}
		}()
	}
}

// sotwRequests are a SotW client's first requests on a new stream: every
// type it holds, with the names it asks for, and with resume the
// version_info it accepted last of each, as grpc-go and Envoy send.
func (c *client) sotwRequests(resume bool) []*discovery.DiscoveryRequest {
	var reqs []*discovery.DiscoveryRequest
	for _, t := range c.heldNames() {
		req := &discovery.DiscoveryRequest{TypeUrl: t.typeURL, ResourceNames: t.names}
		if resume {
			req.VersionInfo = c.acked[t.typeURL]
		}
		reqs = append(reqs, req)
	}
	reqs[0].Node = c.node
	return reqs
}

// deltaRequests are a Delta client's first requests on a new stream: a
// subscription to every type it holds and, with resume, the version of
// every resource it holds (initial_resource_versions).
func (c *client) deltaRequests(resume bool) []*discovery.DeltaDiscoveryRequest {
	var reqs []*discovery.DeltaDiscoveryRequest
	for _, t := range c.heldNames() {
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: t.typeURL, ResourceNamesSubscribe: t.names}
		if resume {
			// A copy: the sending goroutine marshals it while the
			// receiving one updates the client's versions.
			req.InitialResourceVersions = maps.Clone(c.versions[t.typeURL])
		}
		reqs = append(reqs, req)
	}
	reqs[0].Node = c.node
	return reqs
}
