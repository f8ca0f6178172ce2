package krt_test

import "github.com/meshd/meshd/krt"

// newStatic returns a new graph and an empty static collection of T in
// it, made with opts: where most of these tests begin.
func newStatic[T any](opts ...krt.Option) (*krt.Graph, krt.Static[T]) {
	g := krt.NewGraph()
	return g, krt.NewStatic[T](g, opts...)
}
