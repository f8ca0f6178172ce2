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
// by hand.
// sources/meshconfig turns the mesh-wide configuration into a singleton
// collection.
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
