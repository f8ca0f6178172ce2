package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/bench/harness/child"
	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/xds"
)

// fleet is the child's P clients and what they have received.
type fleet struct {
	n int
	// staticWindows fixes each connection's HTTP/2 windows (see dial).
	staticWindows bool
	// subscribe is the number of services each client asks for by name;
	// 0 asks for everything (wildcard).
	subscribe int
	bytes     atomic.Int64
	msgs      atomic.Int64
	last      atomic.Int64 // unix nanos of the last response
	// clients are the P clients, kept across streams so that -reconnect
	// can move them to another server holding what they received.
	clients []*client

	mu sync.Mutex // guards following
	// complete counts the clients holding every type.
	complete int
	// holders counts, per cluster, the clients holding its load
	// assignment: the streams a change of it affects.
	holders map[string]int
	// want is the armed expectation: the cluster whose CLA must come with
	// ip, to wantN clients; got counts the clients that have it.
	wantCluster, wantIP string
	wantN, got          int
	gotCh               chan struct{}
}

// client is one ADS client (SotW or Delta) and what it holds; its stream
// can be dropped and opened again, on another server (reconnect.go).
type client struct {
	f    *fleet
	node *corev3.Node
	// cc, cancel and done are the current stream's connection, the cancel
	// of its context, and a channel closed once its receiving goroutine
	// has returned.
	cc     *grpc.ClientConn
	cancel context.CancelFunc
	done   chan struct{}
	// out queues requests for the sending goroutine, so that receiving
	// never waits for the server to read; dout is its Delta counterpart.
	out  chan *discovery.DiscoveryRequest
	dout chan *discovery.DeltaDiscoveryRequest
	// acked is, per type, the version_info of the last response accepted
	// (SotW), and versions each resource's version (Delta): what a client
	// names on reconnecting.
	acked    map[string]string
	versions map[string]map[string]string
	// raw holds the last bytes received per type and name; a resource is
	// decoded only when they change.
	raw map[string]map[string][]byte
	// routeOf and edsOf are what the listeners and clusters name.
	routeOf  map[string]string
	edsOf    map[string]string
	routes   []string
	clusters []string
	eds      map[string]bool
	listener bool
	complete bool
	// listeners are the listener names a client asks for by name, like a
	// gRPC proxyless client dialing those targets; nil is wildcard LDS and
	// CDS. A named client asks for the clusters its routes name (clusterOf,
	// per route) instead of every cluster.
	listeners []string
	clusterOf map[string][]string
	cdsNames  []string
}

// runClients is the child: it reads commands on stdin and answers on
// stdout.
func runClients(addr string, fl child.Fleet, subscribe int, delta bool) {
	p, quiet := fl.P, fl.Quiet
	f := &fleet{n: fl.N, subscribe: subscribe, staticWindows: fl.StaticWindows, holders: map[string]int{}}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The parent starts its clocks once the child runs: this binary's
	// start-up (Kubernetes API packages) is not the server's connect time.
	say("STARTED")
	var cpuMark time.Duration
	for in.Scan() {
		fields := strings.Fields(in.Text())
		switch fields[0] {
		case "CONNECT":
			cpuMark = metric.CPU()
			for i := range p {
				c := f.newClient(i)
				f.clients = append(f.clients, c)
				go func() {
					if err := c.opener(delta)(ctx, addr, false, false); err != nil {
						metric.Fatalf("client %d: %v", i, err)
					}
				}()
			}
			waitFleet(f, p)
			say("READY")
			for time.Since(time.Unix(0, f.last.Load())) < quiet {
				time.Sleep(quiet / 10)
			}
			say("SETTLED %d %d %d", f.bytes.Swap(0), f.msgs.Swap(0), (metric.CPU() - cpuMark).Microseconds())
		case "EXPECT":
			ch := make(chan struct{})
			f.mu.Lock()
			f.wantCluster, f.wantIP, f.got, f.gotCh = fields[2], fields[3], 0, ch
			f.wantN = f.holders[f.wantCluster]
			if f.wantN == 0 {
				close(ch)
				f.wantCluster = ""
			}
			affected := f.wantN
			f.mu.Unlock()
			cpuMark = metric.CPU()
			say("ARMED %d", affected)
			<-ch
			say("GOT")
			for time.Since(time.Unix(0, f.last.Load())) < quiet {
				time.Sleep(quiet / 10)
			}
			say("SETTLED %d %d %d", f.bytes.Swap(0), f.msgs.Swap(0), (metric.CPU() - cpuMark).Microseconds())
		case "DROP":
			f.drop()
			say("DROPPED")
		case "RECONNECT":
			f.bytes.Swap(0)
			f.msgs.Swap(0)
			cpuMark = metric.CPU()
			f.reconnect(ctx, fields[1], fields[2] == "resume", delta)
		case "COUNT":
			say("SETTLED %d %d %d", f.bytes.Swap(0), f.msgs.Swap(0), (metric.CPU() - cpuMark).Microseconds())
		case "QUIT":
			return
		}
	}
}

// waitFleet waits until every client holds every type.
func waitFleet(f *fleet, p int) {
	for {
		f.mu.Lock()
		done := f.complete == p
		f.mu.Unlock()
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// dial returns a connection of its own to addr, as each proxy has. With
// staticWindows its HTTP/2 windows are fixed, as Envoy's are: grpc-go
// then makes no bandwidth estimate, whose PINGs the server must answer.
func dial(addr string, staticWindows bool) (*grpc.ClientConn, error) {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1 << 30))}
	if staticWindows {
		// Envoy's HTTP/2 defaults: 256 MiB for a stream and for the
		// connection.
		opts = append(opts, grpc.WithStaticStreamWindowSize(256<<20), grpc.WithStaticConnWindowSize(256<<20))
	}
	return grpc.NewClient(addr, opts...)
}

// openSotW opens a SotW stream to addr and runs it in goroutines of its
// own until drop. On the first stream (again false) the client asks for
// Listeners, and Clusters when wildcard, and follows what they name; on a
// later one it asks at once for every type it holds, naming with resume
// the version it accepted last of each.
func (c *client) openSotW(ctx context.Context, addr string, again, resume bool) error {
	stream, err := openStream(c, ctx, addr, discovery.AggregatedDiscoveryServiceClient.StreamAggregatedResources)
	if err != nil {
		return err
	}
	c.out = make(chan *discovery.DiscoveryRequest, 1024)
	go sendAll(stream.Send, c.out)
	if again {
		for _, req := range c.sotwRequests(resume) {
			c.out <- req
		}
	} else {
		c.out <- &discovery.DiscoveryRequest{Node: c.node, TypeUrl: xds.ListenerType, ResourceNames: c.listeners}
		if c.listeners == nil {
			c.out <- &discovery.DiscoveryRequest{TypeUrl: xds.ClusterType}
		}
	}
	go receive(c, stream.Recv, c.handle)
	return nil
}

// newClient returns client i's state; with f.subscribe > 0 it asks for
// the listeners of its subscribedServices.
func (f *fleet) newClient(i int) *client {
	c := &client{f: f, node: grpcGoNode("client-" + strconv.Itoa(i)),
		raw: map[string]map[string][]byte{}, routeOf: map[string]string{},
		edsOf: map[string]string{}, eds: map[string]bool{}, clusterOf: map[string][]string{},
		acked: map[string]string{}, versions: map[string]map[string]string{}}
	for _, svc := range subscribedServices(i, f.subscribe, f.n) {
		c.listeners = append(c.listeners, listenerName(svc))
	}
	slices.Sort(c.listeners)
	c.listeners = slices.Compact(c.listeners)
	return c
}

// grpcGoNode is the node a grpc-go xDS client names itself by: its user
// agent, which tells the server (collections.ClientVariant) what form of
// the resources it reads, and the features it supports.
func grpcGoNode(id string) *corev3.Node {
	return &corev3.Node{
		Id: id, Cluster: "bench", UserAgentName: "gRPC Go",
		UserAgentVersionType: &corev3.Node_UserAgentVersion{UserAgentVersion: grpc.Version},
		ClientFeatures:       []string{"envoy.lb.does_not_support_overprovisioning", "xds.config.resource-in-sotw"},
	}
}

// handle decodes the resources whose bytes changed, follows listeners to
// routes and clusters to load assignments, and ACKs.
func (c *client) handle(resp *discovery.DiscoveryResponse) error {
	raw := c.raw[resp.TypeUrl]
	if raw == nil {
		raw = map[string][]byte{}
		c.raw[resp.TypeUrl] = raw
	}
	seen := map[string]bool{}
	for _, a := range resp.Resources {
		name := nameOf(a.Value)
		seen[name] = true
		if prev, ok := raw[name]; ok && bytes.Equal(prev, a.Value) {
			continue
		}
		raw[name] = a.Value
		if err := c.decode(resp.TypeUrl, name, a.Value); err != nil {
			return err
		}
	}
	var names []string
	switch resp.TypeUrl {
	case xds.ListenerType:
		c.listener = true
		names = c.listeners
		if routes, changed := followed(c.routeOf, seen, raw, c.routes); changed {
			c.routes = routes
			defer c.request(xds.RouteType, routes)
		}
	case xds.ClusterType:
		names = c.cdsNames
		if clusters, changed := followed(c.edsOf, seen, raw, c.clusters); changed {
			c.clusters = clusters
			defer c.request(xds.EndpointType, clusters)
		}
	case xds.RouteType:
		names = c.routes
		if c.listeners != nil {
			if cds := c.routeClusters(); !slices.Equal(cds, c.cdsNames) {
				c.cdsNames = cds
				defer c.request(xds.ClusterType, cds)
			}
		}
	case xds.EndpointType:
		names = c.clusters
	}
	c.out <- &discovery.DiscoveryRequest{TypeUrl: resp.TypeUrl, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce, ResourceNames: names}
	c.acked[resp.TypeUrl] = resp.VersionInfo
	c.markComplete()
	return nil
}

// followed drops from of (the route or load assignment each listener or
// cluster names) the resources a SotW response no longer holds, with their
// bytes in raw, and returns the sorted names of still names and whether
// they differ from held.
func followed(of map[string]string, seen map[string]bool, raw map[string][]byte, held []string) ([]string, bool) {
	for name := range of {
		if !seen[name] {
			delete(of, name)
			delete(raw, name)
		}
	}
	names := sortedValues(of)
	return names, !slices.Equal(names, held)
}

// markComplete counts the client once it holds every type.
func (c *client) markComplete() {
	want := c.f.n
	if c.listeners != nil {
		want = len(c.listeners)
	}
	if !c.complete && c.listener && len(c.eds) >= want && len(c.routes) > 0 {
		c.complete = true
		c.f.mu.Lock()
		c.f.complete++
		c.f.mu.Unlock()
	}
}

// decode reads one changed resource.
func (c *client) decode(typeURL, name string, b []byte) error {
	switch typeURL {
	case xds.ListenerType:
		var l listenerv3.Listener
		if err := proto.Unmarshal(b, &l); err != nil {
			return err
		}
		delete(c.routeOf, name)
		if api := l.GetApiListener().GetApiListener(); api != nil {
			var hcm hcmv3.HttpConnectionManager
			if err := api.UnmarshalTo(&hcm); err != nil {
				return err
			}
			if r := hcm.GetRds().GetRouteConfigName(); r != "" {
				c.routeOf[name] = r
			}
		}
	case xds.ClusterType:
		var cl clusterv3.Cluster
		if err := proto.Unmarshal(b, &cl); err != nil {
			return err
		}
		delete(c.edsOf, name)
		if cl.GetType() == clusterv3.Cluster_EDS {
			eds := cl.GetEdsClusterConfig().GetServiceName()
			if eds == "" {
				eds = cl.Name
			}
			c.edsOf[name] = eds
		}
	case xds.RouteType:
		var rc routev3.RouteConfiguration
		if err := proto.Unmarshal(b, &rc); err != nil {
			return err
		}
		var cls []string
		for _, vh := range rc.VirtualHosts {
			for _, r := range vh.Routes {
				if cl := r.GetRoute().GetCluster(); cl != "" {
					cls = append(cls, cl)
				}
				for _, w := range r.GetRoute().GetWeightedClusters().GetClusters() {
					cls = append(cls, w.Name)
				}
			}
		}
		c.clusterOf[name] = cls
	case xds.EndpointType:
		var cla endpointv3.ClusterLoadAssignment
		if err := proto.Unmarshal(b, &cla); err != nil {
			return err
		}
		c.hold(cla.ClusterName, true)
		c.checkExpect(&cla)
	}
	return nil
}

// hold records whether the client holds cluster's load assignment, and
// counts its holders in the fleet.
func (c *client) hold(cluster string, held bool) {
	if c.eds[cluster] == held {
		return
	}
	d := 1
	if held {
		c.eds[cluster] = true
	} else {
		delete(c.eds, cluster)
		d = -1
	}
	c.f.mu.Lock()
	c.f.holders[cluster] += d
	c.f.mu.Unlock()
}

// routeClusters returns the clusters the client's routes name, sorted.
func (c *client) routeClusters() []string {
	var out []string
	for _, r := range c.routes {
		out = append(out, c.clusterOf[r]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// nameOf reads field 1, the name of every resource type served, without
// decoding the rest.
func nameOf(b []byte) string {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return ""
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c *client) request(typeURL string, names []string) {
	c.out <- &discovery.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names}
}

// checkExpect counts the client once when cla is the armed cluster's and
// holds the armed address.
func (c *client) checkExpect(cla *endpointv3.ClusterLoadAssignment) {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wantCluster == "" || cla.ClusterName != f.wantCluster {
		return
	}
	for _, loc := range cla.Endpoints {
		for _, ep := range loc.LbEndpoints {
			if ep.GetEndpoint().GetAddress().GetSocketAddress().GetAddress() == f.wantIP {
				f.got++
				if f.got == f.wantN {
					close(f.gotCh)
					f.wantCluster = ""
				}
				return
			}
		}
	}
}
