// Package krttest helps test code built on krt: inputs written from Go
// values or JSON, assertions on what a collection holds, and a recorder of
// the events a collection emits that waits for them without sleeps.
//
// A test typically:
//
//  1. g := krt.NewGraph(); krttest.Run(t, g) (handlers deliver until the test ends)
//  2. pods := krttest.NewStatic(g, krttest.FromJSON[Pod](t, `[{"name": "a"}]`))
//  3. derive the collections under test from pods
//  4. ev := krttest.Track(t, g, derived), then write inputs
//  5. krttest.ExpectKeys(t, derived, "a") and ev.Expect("add a")
//
// Writes are synchronous, so a collection's contents can be checked right
// after a write; only handler events need Run and Expect, which waits with
// Registration.WaitVersion for the version the graph has committed.
// Queued writes (Static.SetLater, Graph.UpdateLater, as a source feeding a
// burst makes them) are readable after krttest.Flush.
//
// Like krt, krttest imports only the standard library: JSON (encoding/json)
// stands in for YAML.
package krttest
