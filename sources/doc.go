// Package sources is where the outside world enters the krt graph: every
// input meshd reads becomes a typed krt collection of ordinary Kubernetes
// API objects.
//
// Two sources produce the same Inputs:
//
//   - sources/kube watches a Kubernetes API server through client-go
//     informers (core kinds, Gateway API routes, and any CRD through the
//     dynamic client);
//   - sources/folder reads a directory (or an fs.FS) of YAML and JSON
//     manifests and watches it for edits.
//
// Because both fill the same Inputs, everything downstream is identical for
// both; JoinInputs combines them when a folder adds to a cluster, and
// StaticInputs gives tests (and other writers) the same collections to fill
// by hand. sources/meshconfig turns the mesh-wide configuration (a file,
// or a ConfigMap among the Inputs) into the collection the program puts in
// Inputs.MeshConfig, which the sources leave empty. Inputs is also what
// collections.Build derives the mesh model from.
//
// # Adding an input kind
//
// Operations over every input (JoinInputs, Complete, Synced, WaitSynced,
// NewStaticInputs and its writes) go through one table, inputKinds in
// inputs.go. A new kind takes:
//
//  1. a field of Inputs (inputs.go);
//  2. its line in inputKinds, beside the field;
//  3. for each source that reads it, its collection where the source fills
//     Inputs (kube.New, with a WithWatch resource name and a line in the
//     ClusterRole of deploy/; folder.newSource). A source that does not
//     read it gets an empty, synced collection from Complete, as
//     collections.Build does for any field left nil.
//
// TestEveryFieldIsAKind fails when step 2 is missing.
//
// # Items
//
// Items are pointers to API objects shared with the source that produced
// them: they must be treated as immutable. An item's key is
// "namespace/name", or "name" for cluster-scoped kinds (see Key).
// Collections made with CollectionOptions compare items cheaply: two values
// with the same non-empty ResourceVersion are equal, otherwise they are
// compared with equality.Semantic.DeepEqual.
package sources
