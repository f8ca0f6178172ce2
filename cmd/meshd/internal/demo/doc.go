// Package demo holds the demo mesh that meshd serves when started without a
// config source: two namespaces, four services, their pods and a GAMMA
// HTTPRoute splitting traffic 90/10 between two versions of a service.
//
// The files are ordinary Kubernetes YAML; from the repository's root,
// `meshd --config-dir cmd/meshd/internal/demo` serves the same mesh from
// disk, where edits are picked up live. The package is internal to the
// binary so that meshd imports nothing of examples/, which holds programs
// for users to copy.
package demo
