package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// snapshots makes versioned snapshots of the model and sets them for every
// node, the two halves of a change's server-side work.
type snapshots struct {
	cache cachev3.SnapshotCache
	nodes []string
	// perType bumps only the load assignments' version on a change (the
	// other types keep version 1); otherwise one version covers all.
	perType bool
	version int
}

// newSnapshots returns an ADS-mode snapshot cache for the nodes the
// clients name themselves: client-0 … client-(p-1).
func newSnapshots(p int, perType bool) *snapshots {
	s := &snapshots{cache: cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil), perType: perType}
	for i := range p {
		s.nodes = append(s.nodes, "client-"+strconv.Itoa(i))
	}
	return s
}

// build translates the model into the next snapshot.
func (s *snapshots) build(w *model) (*cachev3.Snapshot, error) {
	r, err := buildResources(w)
	if err != nil {
		return nil, err
	}
	s.version++
	v := strconv.Itoa(s.version)
	rest := v
	if s.perType {
		rest = "1"
	}
	snap := &cachev3.Snapshot{}
	snap.Resources[types.Listener] = cachev3.NewResources(rest, r.listeners)
	snap.Resources[types.Route] = cachev3.NewResources(rest, r.routes)
	snap.Resources[types.Cluster] = cachev3.NewResources(rest, r.clusters)
	snap.Resources[types.Endpoint] = cachev3.NewResources(v, r.assignments)
	return snap, nil
}

// setAll gives every node snap; the cache answers their open watches.
func (s *snapshots) setAll(snap *cachev3.Snapshot) error {
	for _, node := range s.nodes {
		if err := s.cache.SetSnapshot(context.Background(), node, snap); err != nil {
			return fmt.Errorf("set snapshot for %s: %w", node, err)
		}
	}
	return nil
}
