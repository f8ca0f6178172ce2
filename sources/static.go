package sources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshd/meshd/krt"
)

// StaticInputs are Inputs made of krt.Static collections, which their
// owner writes: tests and benchmarks of what lies downstream, and programs
// that hold their objects themselves. Write them by item (Set, Delete) or
// through a kind's krt.Static (StaticOf), for transactions and the other
// writes. It is safe for concurrent use, as krt.Static is.
type StaticInputs struct {
	g  *krt.Graph
	in Inputs
}

// NewStaticInputs returns empty static collections named prefix+"/services"
// and so on (the mesh config prefix+"/meshconfig"), made with
// CollectionOptions plus extra (for example krt.WithUnsynced()).
func NewStaticInputs(g *krt.Graph, prefix string, extra ...krt.Option) StaticInputs {
	s := StaticInputs{g: g}
	for _, k := range inputKinds {
		k.setStatic(g, &s.in, prefix, extra...)
	}
	return s
}

// Inputs returns the collections.
func (s StaticInputs) Inputs() Inputs { return s.in }

// Set adds or replaces items, each in the collection of its type (a
// meshconfig.MeshConfig in MeshConfig), in one transaction, and returns
// the committed version. A *corev1.Pod is stored as its PodInfo in Pods,
// as the sources store it. It panics when an item's type has no
// collection: that is a programming error.
func (s StaticInputs) Set(items ...any) uint64 {
	return s.g.Update(func(tx *krt.Txn) {
		for _, item := range items {
			s.write(item, func(k inputKind, item any) bool { return k.set(tx, &s.in, item) })
		}
	})
}

// Delete removes items, each from the collection of its type, by their
// keys, in one transaction, and returns the committed version. A
// *corev1.Pod deletes its PodInfo. Absent items are ignored; it panics as
// Set does.
func (s StaticInputs) Delete(items ...any) uint64 {
	return s.g.Update(func(tx *krt.Txn) {
		for _, item := range items {
			s.write(item, func(k inputKind, item any) bool { return k.del(tx, &s.in, item) })
		}
	})
}

// write applies to item the first kind whose write accepts it. A Pod is
// converted to its PodInfo first, and apply is given that.
func (s StaticInputs) write(item any, apply func(k inputKind, item any) bool) {
	if pod, ok := item.(*corev1.Pod); ok {
		item = NewPodInfo(pod)
	}
	for _, k := range inputKinds {
		if apply(k, item) {
			return
		}
	}
	panic(fmt.Sprintf("sources: no input collection holds %T", item))
}

// MarkSynced marks every collection synced.
func (s StaticInputs) MarkSynced() {
	for _, k := range inputKinds {
		k.markSynced(&s.in)
	}
}

// StaticOf returns the collection of s that holds T, as the krt.Static it
// is. It panics when no field of Inputs holds T.
func StaticOf[T any](s StaticInputs) krt.Static[T] {
	for _, k := range inputKinds {
		if k, ok := k.(kind[T]); ok {
			return k.static(&s.in)
		}
	}
	var zero T
	panic(fmt.Sprintf("sources: no input collection holds %T", zero))
}
