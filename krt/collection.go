package krt

import "context"

// Collection is a typed, keyed set of items that can be read, indexed,
// fetched from transformations and watched.
//
// All methods are safe for concurrent use. Get, List and Len read the last
// committed version at once, never waiting for a running transaction; At
// reads the version of a Snapshot (see the package's Consistency
// section). A transformation must not call them (they panic): it reads
// through Fetch, which sees the transaction's own state and records the
// dependency.
type Collection[T any] interface {
	// Name returns the collection's name, as given by WithName or derived
	// from its item type.
	Name() string
	// Get returns the item with the given key, and whether it exists.
	Get(key string) (T, bool)
	// List returns every item, ordered by key.
	List() []T
	// Len returns the number of items.
	Len() int
	// At returns the collection as of snapshot s. It panics if s is of
	// another graph.
	At(s *Snapshot) View[T]
	// Register adds a handler that receives every later transaction's
	// changes to the collection as one Batch. Each handler has its own queue
	// and goroutine (started by Graph.Run): batches arrive in commit order,
	// none is dropped, and a slow handler delays no one else. With
	// WithReplay, the first batch holds the current items as adds.
	Register(handler func(Batch[T]), opts ...RegisterOption) *Registration
	// HasSynced reports whether the collection holds its complete initial
	// state: its inputs have synced and their state has been propagated.
	HasSynced() bool
	// Synced returns a channel that is closed once HasSynced is true.
	Synced() <-chan struct{}
	// WaitUntilSynced blocks until the collection has synced or stop is
	// closed, and reports whether it synced.
	WaitUntilSynced(stop <-chan struct{}) bool

	core() *store[T]
}

// WaitSynced blocks until every collection has synced or ctx ends; it
// returns ctx's error in the latter case.
func WaitSynced(ctx context.Context, cols ...interface{ Synced() <-chan struct{} }) error {
	for _, c := range cols {
		select {
		case <-c.Synced():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// EventType says what happened to an item.
type EventType uint8

const (
	// EventAdd: the key did not exist before; New is set.
	EventAdd EventType = iota + 1
	// EventUpdate: the key existed and its value changed; Old and New are set.
	EventUpdate
	// EventDelete: the key no longer exists; Old is set.
	EventDelete
)

func (t EventType) String() string {
	switch t {
	case EventAdd:
		return "add"
	case EventUpdate:
		return "update"
	case EventDelete:
		return "delete"
	}
	return "unknown"
}

// Event is the net change of one key within one transaction.
type Event[T any] struct {
	Type EventType
	Key  string
	Old  *T // nil for EventAdd
	New  *T // nil for EventDelete
}

// Latest returns the new value, or the old one for a delete.
func (e Event[T]) Latest() T {
	if e.New != nil {
		return *e.New
	}
	return *e.Old
}

// Batch is the set of changes one transaction made to one collection.
type Batch[T any] struct {
	// Version is the version the transaction committed as. A replay batch
	// carries the version it was read at.
	Version uint64
	// Events holds at most one event per key, ordered by key.
	Events []Event[T]
}
