package main

import (
	"context"
	"time"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/multicluster"
)

// mesh is the model over an empty local cluster and the remotes.
type mesh struct {
	g      *krt.Graph
	local  sources.StaticInputs
	r      *multicluster.Remotes
	model  *collections.Model
	cancel context.CancelFunc
	done   chan struct{}
}

func newMesh() *mesh {
	g := krt.NewGraph()
	m := &mesh{g: g, local: sources.NewStaticInputs(g, "local"), r: multicluster.New(g)}
	in := sources.JoinInputs(g, m.local.Inputs(), m.r.Inputs().Complete(g, "remotes"))
	m.model = collections.Build(g, in)
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go func() { _ = g.Run(ctx) }()
	go func() { defer close(m.done); _ = m.r.Run(ctx) }()
	return m
}

func (m *mesh) stop() { m.cancel(); <-m.done }

type joinResult struct {
	wall, cpu time.Duration
	heap      uint64
	endpoints int
}

// join names the remote and waits until the model's assignments hold
// want endpoints.
func (m *mesh) join(kubeconfig []byte, want int) joinResult {
	heap0 := metric.HeapAlloc()
	cpu0, t0 := metric.CPU(), time.Now()
	m.r.Apply("bench", []multicluster.Cluster{{Name: "west", Kubeconfig: kubeconfig}}, nil)
	n := m.waitEndpoints(want)
	res := joinResult{wall: time.Since(t0), cpu: metric.CPU() - cpu0, endpoints: n}
	if h := metric.HeapAlloc(); h > heap0 {
		res.heap = h - heap0
	}
	return res
}

// waitEndpoints waits until the model's assignments hold at least want
// endpoints, and returns how many they hold.
func (m *mesh) waitEndpoints(want int) int {
	n := m.endpoints()
	for ; n < want; n = m.endpoints() {
		time.Sleep(5 * time.Millisecond)
	}
	return n
}

// leave removes the remote and waits until its endpoints are gone.
func (m *mesh) leave() {
	m.r.Apply("bench", nil, nil)
	for m.endpoints() > 0 || len(m.r.Status()) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
}

// endpoints counts the endpoints of every assignment.
func (m *mesh) endpoints() int {
	n := 0
	for _, cla := range m.model.ClusterLoadAssignments.List() {
		for _, l := range cla.Message().Endpoints {
			n += len(l.LbEndpoints)
		}
	}
	return n
}
