package krt

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
)

// Readers never wait for the writer, so a transformation that calls Get
// instead of Fetch would not deadlock any more: it would silently read the
// last committed version and record no dependency. A Graph.Update
// function that writes through Static.Set instead of Static.In(tx) would
// wait for itself forever, and a write inside Graph.Read would change the
// graph under a reader that holds a version fixed. The lock cannot tell
// its holder from another goroutine (Go has no goroutine identity), so a
// goroutine looks at its own stack: a reader while a transaction runs, a
// writer that would wait for the lock or that starts while a Read is
// open. If it is inside a transformation, an Update or a Read, it panics
// with the fix. Frames are classified once per program counter, so the
// look costs one runtime.Callers and a map lookup per frame, and only
// reads that overlap a transaction pay it.

// pkgPrefix is krt's function-name prefix in stack frames,
// "github.com/meshd/meshd/krt.".
var pkgPrefix = func() string {
	name := runtime.FuncForPC(reflect.ValueOf(NewGraph).Pointer()).Name()
	return strings.TrimSuffix(name, "NewGraph")
}()

// heldWhere says what on the calling goroutine's stack holds the graph's
// lock: "transformation", "update", "index" or, for a writer, "read"; ""
// when nothing does. A writer skips the innermost frame that takes the
// write lock, which is the call now asking for it.
func heldWhere(writer bool) string {
	var pcs [128]uintptr
	n := runtime.Callers(3, pcs[:])
	skip := writer
	for _, pc := range pcs[:n] {
		what := frameHolder(pc)
		if what == "read" && !writer {
			continue
		}
		if what != "" {
			if !skip || what == "transformation" {
				return what
			}
			skip = false
		}
	}
	return ""
}

// frameHolders caches frameHolder's answer by program counter.
var frameHolders sync.Map // uintptr -> string

// frameHolder classifies the function a return address is in, inlined
// callers included.
func frameHolder(pc uintptr) string {
	if v, ok := frameHolders.Load(pc); ok {
		return v.(string)
	}
	what := ""
	frames := runtime.CallersFrames([]uintptr{pc})
	for {
		f, more := frames.Next()
		if w := lockHolder(f.Function); w != "" {
			what = w
		}
		if !more {
			break
		}
	}
	frameHolders.Store(pc, what)
	return what
}

// lockHolder classifies a frame's function by the lock it runs under.
func lockHolder(function string) string {
	name, ok := strings.CutPrefix(function, pkgPrefix)
	if !ok {
		return ""
	}
	generic := func(recv, method string) bool {
		return strings.HasPrefix(name, "(*"+recv+"[") && strings.HasSuffix(name, "])."+method)
	}
	switch {
	case generic("derived", "call"), generic("join", "mergeSafely"):
		return "transformation"
	case name == "(*Graph).Update", name == "(*Graph).construct":
		return "update"
	case strings.HasPrefix(name, "NewIndex["):
		return "index"
	case name == "(*Graph).Read":
		return "read"
	}
	return ""
}

// checkReadInsideWriter panics when the calling goroutine reads while it
// runs a transaction itself: a read from a transformation, an Update or
// an index's key function.
func checkReadInsideWriter() {
	switch heldWhere(false) {
	case "transformation":
		panic("krt: Get, List, Len, an Index lookup or Graph.Read called from inside a transformation, " +
			"where it would read the last committed version and record no dependency: read with krt.Fetch or krt.FetchOne on the HandlerContext")
	case "update":
		panic("krt: a collection read from inside Graph.Update, which would not see the transaction's own writes: " +
			"read through the transaction, with Static.In(tx).Get")
	case "index":
		panic("krt: a collection read from inside an index's key function, which runs in a transaction: " +
			"compute index keys from the item alone")
	}
}

// checkWriteWouldDeadlock panics when the calling goroutine is about to
// wait for the write lock while it holds the lock itself, or writes from
// inside Graph.Read.
func checkWriteWouldDeadlock() {
	switch heldWhere(true) {
	case "transformation":
		panic("krt: a write from inside a transformation, which runs in a transaction of its own graph: " +
			"a transformation returns its outputs and writes nothing; to recompute on state outside the graph, use a Trigger")
	case "update":
		panic("krt: a write through Static.Set, Delete, Reset or Modify inside Graph.Update: " +
			"write through the transaction, with Static.In(tx)")
	case "index":
		panic("krt: a write from inside an index's key function: compute index keys from the item alone")
	case "read":
		panic("krt: a write from inside Graph.Read, which holds the version fixed: write after Read returns")
	}
}
