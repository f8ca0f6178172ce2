package demo

import "embed"

// FS holds the demo mesh's YAML files at its root.
//
//go:embed *.yaml
var FS embed.FS
