// Package meshconfig defines the mesh-wide configuration, its defaults and
// its validation, and loads it as a krt singleton from a watched YAML file
// or a Kubernetes ConfigMap.
package meshconfig
