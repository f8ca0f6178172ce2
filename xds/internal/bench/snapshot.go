package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	streamv3 "github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
)

// snapshotBaseline handles the same change the way a go-control-plane user
// does: package every current resource into a new cache.Snapshot and set
// it for every node, whose four watches (one per type, subscribed like the
// bench's clients) are open. It runs in the server's process after the
// change has settled, so its CPU is measured alone.
//
// It is a lower bound of that approach's cost: the resources are the
// model's, already translated (a real rebuild translates the whole mesh
// again), and the responses the watches get are drained, not serialized or
// sent. With named subscriptions (-subscribe) the cache runs in non-ADS
// mode: in ADS mode it answers a node only when its snapshot holds exactly
// the names the node asks for, which means a snapshot per node — more work
// than the one shared snapshot measured here.
type snapshotBaseline struct {
	g       *krt.Graph
	model   *collections.Model
	cache   cachev3.SnapshotCache
	nodes   []*corev3.Node
	names   [][4][]string // per node: the names of each type it asks for; nil is wildcard
	version int
	// returned is, per type, every name of the last snapshot with its
	// version: what each client holds once it has ACKed it.
	returned [4]map[string]string
}

func newSnapshotBaseline(g *krt.Graph, model *collections.Model, w *workload, p, subscribe int) *snapshotBaseline {
	b := &snapshotBaseline{g: g, model: model, cache: cachev3.NewSnapshotCache(subscribe == 0, cachev3.IDHash{}, nil)}
	for i := range p {
		b.nodes = append(b.nodes, &corev3.Node{Id: "client-" + strconv.Itoa(i)})
		var names [4][]string
		for _, svc := range subscribedServices(i, subscribe, w.n) {
			names[0] = append(names[0], listenerName(svc))
			names[1] = append(names[1], listenerName(svc))
			names[2] = append(names[2], w.cluster(svc))
			names[3] = append(names[3], w.cluster(svc))
		}
		b.names = append(b.names, names)
	}
	return b
}

var baselineTypes = [4]string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType}

// rebuild builds and sets the next snapshot; watch first opens every
// node's watches at the current version, outside the measurement.
func (b *snapshotBaseline) rebuild() (time.Duration, time.Duration, error) {
	responses := make(chan cachev3.Response, 4*len(b.nodes))
	var cancels []func()
	if b.version > 0 {
		for i, node := range b.nodes {
			for t, typ := range baselineTypes {
				req := &discovery.DiscoveryRequest{Node: node, TypeUrl: typ, VersionInfo: strconv.Itoa(b.version), ResourceNames: b.names[i][t]}
				sub := streamv3.NewSotwSubscription(b.names[i][t], true)
				sub.SetReturnedResources(b.returned[t])
				cancel, err := b.cache.CreateWatch(req, sub, responses)
				if err != nil {
					return 0, 0, fmt.Errorf("watch: %w", err)
				}
				cancels = append(cancels, cancel)
			}
		}
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	c0, t0 := metric.CPU(), time.Now()
	b.version++
	res := map[resource.Type][]types.Resource{}
	b.g.Read(func(s *krt.Snapshot) {
		res[resource.ListenerType] = protos(s, b.model.Listeners)
		res[resource.RouteType] = protos(s, b.model.RouteConfigurations)
		res[resource.ClusterType] = protos(s, b.model.Clusters)
		res[resource.EndpointType] = protos(s, b.model.ClusterLoadAssignments)
	})
	snap, err := cachev3.NewSnapshot(strconv.Itoa(b.version), res)
	if err != nil {
		return 0, 0, fmt.Errorf("snapshot: %w", err)
	}
	for _, node := range b.nodes {
		if err := b.cache.SetSnapshot(context.Background(), node.Id, snap); err != nil {
			return 0, 0, fmt.Errorf("set snapshot: %w", err)
		}
	}
	for k := range cancels {
		select {
		case <-responses:
		case <-time.After(time.Minute):
			return 0, 0, fmt.Errorf("snapshot baseline: %d of %d watches unanswered", len(cancels)-k, len(cancels))
		}
	}
	wall, cpu := time.Since(t0), metric.CPU()-c0
	for t, typ := range baselineTypes {
		b.returned[t] = map[string]string{}
		for name := range snap.GetResources(typ) {
			b.returned[t][name] = strconv.Itoa(b.version)
		}
	}
	return wall, cpu, nil
}

func protos[M proto.Message](s *krt.Snapshot, c krt.Collection[collections.Resource[M]]) []types.Resource {
	items := c.At(s).List()
	out := make([]types.Resource, len(items))
	for i, r := range items {
		out[i] = r.Message()
	}
	return out
}
