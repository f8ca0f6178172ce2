// Package krtmodule holds no code. One test proves what issue 19 asked
// for: a program that embeds krt depends on krt and nothing else, since
// krt (github.com/meshd/meshd/krt) is a module of its own whose go.mod
// requires nothing, and whose packages and tests import only the standard
// library. See docs/krt.md#depending-on-krt.
//
// It also runs krt's own tests (TestKrtSuite): package patterns stop at a
// nested module, so without it `go test ./...` at the root would not.
package krtmodule
