package krt

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Graph owns a set of collections and the transactions that change them.
// A Graph is safe for concurrent use; create one with NewGraph.
type Graph struct {
	log     *slog.Logger
	history int

	lock    commitLock
	version uint64 // guarded by lock (written under lock, read under rlock)
	nodes   []node // guarded by lock; index is the node id

	commits  versionSignal // tells WaitVersion callers that a version committed
	unsynced []node        // guarded by lock: nodes not yet synced, in id order
	txn      Txn           // guarded by lock: the transaction, reused

	// busyNode and busySince say which collection the running transaction
	// is processing and since when (unix nanoseconds); they are atomics so
	// Busy can answer while a stuck transformation holds the lock.
	busyNode  atomic.Int64 // node id + 1; 0 when idle
	busySince atomic.Int64

	// handler goroutines
	hmu      sync.Mutex
	running  bool
	runCtx   context.Context
	handlers map[handlerRunner]struct{} // registered, not yet stopped
	names    []string                   // node names by id, for Busy
	hwg      sync.WaitGroup
}

// NewGraph returns an empty graph.
func NewGraph(opts ...GraphOption) *Graph {
	g := &Graph{history: 32, handlers: map[handlerRunner]struct{}{}}
	g.lock.init()
	for _, o := range opts {
		o(g)
	}
	if g.log == nil {
		g.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return g
}

// Run delivers events to registered handlers until ctx ends, then stops
// every handler goroutine and returns ctx's error once they have all
// returned. Events committed while Run is not active queue up and are
// delivered by the next Run. Run may be called again after it returns.
func (g *Graph) Run(ctx context.Context) error {
	g.hmu.Lock()
	if g.running {
		g.hmu.Unlock()
		panic("krt: Graph.Run called while already running")
	}
	runCtx, cancel := context.WithCancel(ctx)
	g.running, g.runCtx = true, runCtx
	for h := range g.handlers {
		g.startHandlerLocked(h)
	}
	g.hmu.Unlock()

	<-ctx.Done()
	g.hmu.Lock()
	cancel()
	g.running, g.runCtx = false, nil
	g.hmu.Unlock()
	g.hwg.Wait()
	return ctx.Err()
}

func (g *Graph) startHandlerLocked(h handlerRunner) {
	g.hwg.Add(1)
	ctx := g.runCtx
	go func() {
		defer g.hwg.Done()
		h.run(ctx)
	}()
}

func (g *Graph) addHandler(h handlerRunner) {
	g.hmu.Lock()
	defer g.hmu.Unlock()
	g.handlers[h] = struct{}{}
	if g.running {
		g.startHandlerLocked(h)
	}
}

func (g *Graph) removeHandler(h handlerRunner) {
	g.hmu.Lock()
	delete(g.handlers, h)
	g.hmu.Unlock()
}

// Version returns the version of the last committed transaction. It is 0
// before the first.
func (g *Graph) Version() uint64 {
	g.lock.rlock()
	defer g.lock.runlock()
	return g.version
}

// Read calls fn while no transaction can commit, so every Get, List and
// index lookup inside fn observes the same committed version, which fn
// receives. fn must not write to the graph.
func (g *Graph) Read(fn func(version uint64)) {
	g.lock.rlock()
	defer g.lock.runlock()
	fn(g.version)
}

// Update runs fn as one transaction: writes made through Static.In(tx)
// inside fn are propagated together and commit as one version, which Update
// returns. If fn panics, its writes are undone and the panic continues.
func (g *Graph) Update(fn func(tx *Txn)) uint64 {
	g.lock.lock()
	defer g.lock.unlock()
	tx := g.newTxn()
	func() {
		defer func() {
			if r := recover(); r != nil {
				tx.rollback()
				panic(r)
			}
		}()
		fn(tx)
	}()
	return tx.commit()
}

// construct registers n and runs its initial computation as one
// transaction.
func (g *Graph) construct(n interface {
	node
	setID(int)
}, initial func(tx *Txn)) {
	g.lock.lock()
	defer g.lock.unlock()
	if sub := n.subGraph(); sub != nil {
		sub.adoptLocked(n)
	}
	n.setID(len(g.nodes))
	g.nodes = append(g.nodes, n)
	g.hmu.Lock()
	g.names = append(g.names, n.nodeName())
	g.hmu.Unlock()
	g.unsynced = append(g.unsynced, n)
	tx := g.newTxn()
	if initial != nil {
		initial(tx)
	}
	tx.commit()
}

// BusyInfo says what a running transaction is doing.
type BusyInfo struct {
	Busy       bool          `json:"busy"`
	Collection string        `json:"collection,omitempty"`
	For        time.Duration `json:"for,omitempty"`
}

// Busy reports which collection the running transaction is computing and
// for how long. Unlike Describe it never waits for the transaction, so it
// finds a transformation that blocks.
func (g *Graph) Busy() BusyInfo {
	id := g.busyNode.Load()
	if id == 0 {
		return BusyInfo{}
	}
	since := time.Unix(0, g.busySince.Load())
	g.hmu.Lock()
	name := g.names[int(id-1)]
	g.hmu.Unlock()
	return BusyInfo{Busy: true, Collection: name, For: time.Since(since)}
}
