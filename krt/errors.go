package krt

import "errors"

// ErrKeyConflict is recorded when two inputs of a derived collection produce
// an output with the same key. The output of the input with the
// lexicographically smallest key is kept; the others are held back and take
// over if the winner goes away.
var ErrKeyConflict = errors.New("krt: two inputs produced the same output key")

// ErrPanic is recorded when a transformation or handler panics. The recorded
// error wraps it and carries the panic value and stack.
var ErrPanic = errors.New("krt: panic")

// ErrFailed is recorded when a transformation reports a failure through
// HandlerContext.Fail.
var ErrFailed = errors.New("krt: transformation failed")

// ErrCycle is recorded when a transaction keeps recomputing the same
// collections, which only a dependency cycle can cause.
var ErrCycle = errors.New("krt: dependency cycle")

// ErrNotFound is returned by the introspection methods of Graph when the
// named collection or key does not exist.
var ErrNotFound = errors.New("krt: not found")

// ErrNoAccessor is recorded when a transformation fetches with a filter on
// a part of an item that the fetched collection cannot read: FilterLabels
// on items with no GetLabels method and no WithLabels option, FilterSelects
// without a selector, FilterNamespace without a namespace. Such a filter
// would match nothing, which hides the mistake; the computation fails
// instead, and the error names the collection and the missing option.
var ErrNoAccessor = errors.New("krt: filter on a part the items do not have")

// ErrUnregistered is returned by Registration.WaitVersion once the
// handler has been unregistered: it will receive nothing more.
var ErrUnregistered = errors.New("krt: handler unregistered")

// ErrBusy is returned by Graph.Explain when a transaction has held the
// graph for longer than Explain waits: the explanation reads the writer's
// bookkeeping, which a running transaction is changing. Graph.Busy names
// the collection it is computing.
var ErrBusy = errors.New("krt: busy")
