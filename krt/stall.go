package krt

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// defaultStallThreshold is how long a transformation may run before it is
// reported as stalled, unless WithStallThreshold says otherwise.
const defaultStallThreshold = 5 * time.Second

// Stall describes a transformation that has been running for longer than
// the graph's stall threshold (see WithStallThreshold). Readers are not
// held up by it, but the transaction it belongs to, and every later one,
// wait for it.
type Stall struct {
	Collection string        `json:"collection"`
	Key        string        `json:"key"` // the input being transformed
	Since      time.Time     `json:"since"`
	For        time.Duration `json:"for"`
	// Stack holds the goroutine stacks that are inside a transformation
	// when the stall was found, as runtime.Stack prints them.
	Stack string `json:"stack"`

	run running // the computation, to report it once
}

// computing is what one goroutine of a transaction is transforming: the
// writer's goroutine uses slot 0, parallel workers the others. The
// slot's goroutine reuses fc for each of its computations, so that none
// allocates a context; the watchdog and Busy, on other goroutines, read
// only the atomics, which say which input has been computed since when.
type computing struct {
	fc fetchCtx
	// spare is room for the reads of the slot's next computations (see
	// fetchCtx.room), and scratch that room for a serial recomputation,
	// whose reads are filed before the next one begins.
	spare   []fetchRec
	scratch [4]fetchRec
	runs    atomic.Uint64              // computations begun, to tell one from the next
	since   atomic.Int64               // monoNow when the current one began
	input   atomic.Pointer[inputState] // its input; nil when none runs
	owner   atomic.Pointer[inputOwner] // the input's collection
	_       [64]byte                   // keeps the slots of two goroutines off one cache line
}

// begin publishes a computation of st, an input of o, that began at
// start. runs changes first, so that a reader that finds runs unchanged
// around its reads of since and input read the same computation's (see
// load).
func (c *computing) begin(o *inputOwner, st *inputState, start int64) {
	c.runs.Add(1)
	c.since.Store(start)
	c.owner.Store(o)
	c.input.Store(st)
}

func (c *computing) end() { c.input.Store(nil) }

// running identifies one computation: which slot's run of which input,
// begun when.
type running struct {
	input *inputState
	owner *inputOwner
	since int64
	slot  int
	run   uint64
}

// load returns the computation running in slot c, if any.
func (c *computing) load(slot int) (running, bool) {
	run := c.runs.Load()
	st := c.input.Load()
	since := c.since.Load()
	owner := c.owner.Load()
	if st == nil || c.runs.Load() != run {
		return running{}, false // none, or it ended while being read
	}
	return running{input: st, owner: owner, since: since, slot: slot, run: run}, true
}

// oldestComputation returns the computation running the longest, if any.
func (g *Graph) oldestComputation() (running, bool) {
	var oldest running
	found := false
	for i := range g.computing {
		if r, ok := g.computing[i].load(i); ok && (!found || r.since < oldest.since) {
			oldest, found = r, true
		}
	}
	return oldest, found
}

// monoBase anchors the monotonic clock that transactions read as
// nanoseconds since it: time.Since reads only the monotonic clock, at half
// the cost of time.Now, and a change reads the clock several times.
var monoBase = time.Now()

// monoNow returns the nanoseconds since monoBase.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// monoTime returns the time of a monoNow reading.
func monoTime(n int64) time.Time { return monoBase.Add(time.Duration(n)) }

// watchStalls checks for a stalled transformation until ctx ends. Run
// starts it when a threshold is set.
func (g *Graph) watchStalls(ctx context.Context) {
	t := time.NewTicker(max(min(g.stallAfter/4, time.Second), time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g.checkStall(now)
		}
	}
}

// checkStall reports the oldest computation once it has run past the
// threshold: a log line with its stack, the collection's stall counter,
// and the Stall that Describe and Busy return until it ends.
func (g *Graph) checkStall(now time.Time) {
	r, running := g.oldestComputation()
	since := monoTime(r.since)
	cur := g.stall.Load()
	if !running || now.Sub(since) < g.stallAfter {
		if cur != nil {
			g.stall.Store(nil)
			g.log.Info("transformation no longer stalled", "collection", cur.Collection, "key", cur.Key,
				"took", now.Sub(cur.Since).Round(time.Millisecond))
		}
		return
	}
	if cur != nil && cur.run == r {
		return
	}
	down := r.owner.d
	st := &Stall{Collection: down.nodeName(), Key: r.input.key, Since: since, Stack: transformationStacks(), run: r}
	g.stall.Store(st)
	down.countStall()
	g.log.Warn("transformation stalled", "collection", st.Collection, "key", st.Key,
		"for", now.Sub(since).Round(time.Millisecond), "stack", st.Stack)
}

// currentStall returns the stall being reported, with For brought up to
// date, or nil.
func (g *Graph) currentStall() *Stall {
	st := g.stall.Load()
	if st == nil {
		return nil
	}
	out := *st
	out.For = time.Since(st.Since)
	out.run = running{}
	return &out
}

// transformationFrame names the function that calls a transformation, in
// the form runtime.Stack prints it.
const transformationFrame = ".(*derived[...]).call("

// transformationStacks returns the stacks of the goroutines inside a
// transformation. It stops the world for as long as runtime.Stack takes,
// once per stall.
func transformationStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var found []string
	for _, stack := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(stack, transformationFrame) {
			found = append(found, stack)
		}
	}
	return strings.Join(found, "\n\n")
}

func (s *store[T]) countStall() { s.stats.stalls.Add(1) }
