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

	fc *fetchCtx // the computation, to report it once
}

// computing is what one goroutine of a transaction is transforming: the
// writer's goroutine uses slot 0, parallel workers the others.
type computing struct {
	fc atomic.Pointer[fetchCtx] // its since is set before it is stored
	_  [64]byte                 // keeps the slots of two goroutines off one cache line
}

func (c *computing) begin(fc *fetchCtx, start int64) {
	fc.since = start
	c.fc.Store(fc)
}

func (c *computing) end() { c.fc.Store(nil) }

// oldestComputation returns the computation running the longest, if any.
func (g *Graph) oldestComputation() (*fetchCtx, time.Time) {
	var oldest *fetchCtx
	var since int64
	for i := range g.computing {
		c := &g.computing[i]
		fc := c.fc.Load()
		if fc != nil && (oldest == nil || fc.since < since) {
			oldest, since = fc, fc.since
		}
	}
	return oldest, monoTime(since)
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
	fc, since := g.oldestComputation()
	cur := g.stall.Load()
	if fc == nil || now.Sub(since) < g.stallAfter {
		if cur != nil {
			g.stall.Store(nil)
			g.log.Info("transformation no longer stalled", "collection", cur.Collection, "key", cur.Key,
				"took", now.Sub(cur.Since).Round(time.Millisecond))
		}
		return
	}
	if cur != nil && cur.fc == fc {
		return
	}
	st := &Stall{Collection: fc.down.nodeName(), Key: fc.input, Since: since, Stack: transformationStacks(), fc: fc}
	g.stall.Store(st)
	fc.down.countStall()
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
	out.fc = nil
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
