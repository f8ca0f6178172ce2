// Package demo holds the demo mesh that meshd serves when started without a
// config source: two namespaces, four services, their pods and a GAMMA
// HTTPRoute splitting traffic 90/10 between two versions of a service.
//
// The files are ordinary Kubernetes YAML; `meshd --config-dir examples/demo`
// serves the same mesh from disk, where edits are picked up live.
package demo

import "embed"

// FS holds the demo mesh's YAML files at its root.
//
//go:embed *.yaml
var FS embed.FS
