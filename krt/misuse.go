package krt

import (
	"reflect"
	"runtime"
	"strings"
)

// A goroutine that holds the graph's write lock and asks for it again, to
// read or to write, would wait for itself forever. That happens when a
// transformation calls Get instead of Fetch, or a Graph.Update function
// writes through Static.Set instead of Static.In(tx). The lock cannot tell
// its holder from another goroutine (Go has no goroutine identity), so a
// goroutine about to wait on a writer looks at its own stack: if it is
// inside a transformation or an Update, waiting cannot end, and it panics
// with the fix instead. Only a goroutine that would wait pays for the
// look, so uncontended reads and writes cost nothing extra.

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
	frames := runtime.CallersFrames(pcs[:n])
	skip := writer
	for {
		f, more := frames.Next()
		if what := lockHolder(f.Function, writer); what != "" {
			if !skip || what == "transformation" {
				return what
			}
			skip = false
		}
		if !more {
			return ""
		}
	}
}

// lockHolder classifies a frame's function by the lock it runs under.
func lockHolder(function string, writer bool) string {
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
	case name == "(*Graph).Update", name == "(*Graph).construct",
		generic("store", "Register"), generic("store", "unregister"):
		return "update"
	case strings.HasPrefix(name, "NewIndex["):
		return "index"
	case writer && name == "(*Graph).Read":
		return "read"
	}
	return ""
}

// checkReadWouldDeadlock panics when the calling goroutine is about to
// wait for a write lock that it holds itself.
func checkReadWouldDeadlock() {
	switch heldWhere(false) {
	case "transformation":
		panic("krt: Get, List, Len, an Index lookup or Graph.Read called from inside a transformation, " +
			"which runs in the transaction that read would wait for: read with krt.Fetch or krt.FetchOne on the HandlerContext")
	case "update":
		panic("krt: a collection read from inside Graph.Update, which would wait for its own transaction: " +
			"read through the transaction, with Static.In(tx).Get")
	case "index":
		panic("krt: a collection read from inside an index's key function, which runs under the graph's write lock: " +
			"compute index keys from the item alone")
	}
}

// checkWriteWouldDeadlock panics when the calling goroutine is about to
// wait for the write lock while it holds the lock itself.
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
