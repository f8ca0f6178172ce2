package krt

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Graph owns a set of collections and the transactions that change them.
// A Graph is safe for concurrent use; create one with NewGraph.
type Graph struct {
	log     *slog.Logger
	history int

	lock    writeLock
	writing atomic.Bool   // set while a writer holds lock, for misuse.go
	version atomic.Uint64 // the last committed version; only a writer holding lock stores it
	nodes   []node        // guarded by lock; index is the node id
	// listed is nodes as of the last change to it, for introspection,
	// which must not wait for a running transaction.
	listed atomic.Pointer[[]node]

	// pins are the versions open Graph.Read calls hold (see snapshot.go);
	// recorded, guarded by lock, the nodes keeping committed changes for
	// them.
	pins     pinSet
	recorded []node

	// deliverMu guards every collection's handlers. A commit holds it from
	// making its batches, through publishing its version, to handing the
	// batches out, so a handler registering meanwhile replays the
	// published version and misses no later batch.
	deliverMu sync.Mutex

	// inlinePending, guarded by lock, lists the Inline handlers the
	// commits under the lock gave batches, delivered once it is released.
	inlinePending []inlineDrainer

	commits  versionSignal // tells WaitVersion callers that a version committed
	queue    writeQueue    // UpdateLater's updates (queue.go)
	unsynced []node        // guarded by lock: nodes not yet synced, in id order
	txn      Txn           // guarded by lock: the transaction, reused
	// recentScratch, guarded by lock, is the array finish collects a
	// collection's event records in before the history copies them.
	recentScratch []EventRecord
	// commitTime, guarded by lock, is the time of the committing
	// transaction, read once for all the events it records.
	commitTime time.Time

	// busyNode and busySince say which collection the running transaction
	// is processing and since when it propagates (monoNow); they are
	// atomics so Busy can answer while a stuck transformation holds the
	// lock.
	busyNode  atomic.Int64 // node id + 1; 0 when idle
	busySince atomic.Int64

	// computing has one slot per goroutine that may run transformations
	// (see parallel.go); stall is the stalled one being reported.
	computing  []computing
	stallAfter time.Duration
	stall      atomic.Pointer[Stall]

	// parallelMin is the fewest dirty inputs computed in parallel, and
	// parallelChunk how many a goroutine takes at a time; forceParallel,
	// for tests, ignores GOMAXPROCS.
	parallelMin, parallelChunk int
	forceParallel              bool
	parallelRuns               atomic.Uint64 // for tests
	// applying is the id + 1 of the collection whose results are being
	// applied while others are computed (0: none), and applyMu what its
	// applying holds, for a fetch of that collection (see parallel.go).
	applying atomic.Int64
	applyMu  sync.RWMutex

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
	g := &Graph{
		history: 32, handlers: map[handlerRunner]struct{}{},
		stallAfter: defaultStallThreshold, parallelMin: defaultParallelMin, parallelChunk: defaultParallelChunk,
		computing: make([]computing, defaultParallelism()),
	}
	g.lock.init()
	g.listed.Store(&[]node{})
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
	if g.stallAfter > 0 {
		g.hwg.Add(1)
		go func() {
			defer g.hwg.Done()
			g.watchStalls(runCtx)
		}()
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
	h.attach(&ctx)
	go func() {
		defer g.hwg.Done()
		defer h.detach(&ctx)
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
// before the first. It never waits for a running transaction.
func (g *Graph) Version() uint64 { return g.version.Load() }

// lockWrite takes the write lock for a transaction or a change to the
// graph's shape, refusing a write from inside Graph.Read.
func (g *Graph) lockWrite() {
	if g.pins.open.Load() > 0 && heldWhere(true) == "read" {
		panic("krt: a write from inside Graph.Read, which holds the version fixed: write after Read returns")
	}
	g.lock.lock()
	g.writing.Store(true)
}

func (g *Graph) unlockWrite() {
	pending := g.inlinePending
	g.inlinePending = nil
	g.writing.Store(false)
	g.lock.unlock()
	deliverInline(pending)
}

// Update runs fn as one transaction: writes made through Static.In(tx)
// inside fn are propagated together and commit as one version, which Update
// returns. If fn panics, its writes are undone and the panic continues.
// Readers go on reading the last committed version meanwhile.
func (g *Graph) Update(fn func(tx *Txn)) uint64 {
	g.lockWrite()
	defer g.unlockWrite()
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
	g.lockWrite()
	defer g.unlockWrite()
	if sub := n.subGraph(); sub != nil {
		sub.adoptLocked(n)
	}
	g.nodes = append(g.nodes, n)
	n.setID(len(g.nodes) - 1)
	g.hmu.Lock()
	g.names = append(g.names, n.nodeName())
	g.hmu.Unlock()
	g.unsynced = append(g.unsynced, n)
	tx := g.newTxn()
	if initial != nil {
		initial(tx)
	}
	tx.commit()
	// Introspection finds n once its first items have committed: the
	// constructing transaction records no changes to read them through.
	g.listNodesLocked()
}

// listNodesLocked publishes g.nodes for introspection; the caller holds
// the write lock.
func (g *Graph) listNodesLocked() {
	listed := slices.Clone(g.nodes)
	g.listed.Store(&listed)
}

// BusyInfo says what a running transaction is doing.
type BusyInfo struct {
	Busy       bool   `json:"busy"`
	Collection string `json:"collection,omitempty"`
	// For is how long the longest-running transformation has run, or,
	// when none runs, how long the transaction has been propagating.
	For time.Duration `json:"for,omitempty"`
	// Key is the input the longest-running transformation is computing.
	Key string `json:"key,omitempty"`
	// Stall is set once that transformation has run past the stall
	// threshold and Run's watchdog has reported it.
	Stall *Stall `json:"stall,omitempty"`
}

// Busy reports which collection the running transaction is computing and
// for how long. Unlike Describe it never waits for the transaction, so it
// finds a transformation that blocks.
func (g *Graph) Busy() BusyInfo {
	id := g.busyNode.Load()
	if id == 0 {
		return BusyInfo{}
	}
	since := monoTime(g.busySince.Load())
	g.hmu.Lock()
	name := g.names[int(id-1)]
	g.hmu.Unlock()
	b := BusyInfo{Busy: true, Collection: name, Stall: g.currentStall()}
	if r, ok := g.oldestComputation(); ok {
		b.Key, since = r.input.key, monoTime(r.since)
	}
	b.For = time.Since(since)
	return b
}
