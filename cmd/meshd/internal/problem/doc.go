// Package problem holds the problems meshd's configuration sources report
// now, in the one shape the binary's readers share: the debug UI's Problems
// tab and the meshd_source_problems metric. It owns the type so that
// neither reader owns it for the other.
//
// The binary adapts each source's own report (folder.Problem, the mesh
// config's Status, the Kubernetes source's stats, the route status
// writer's failures) to a []Problem; a Lister gathers them. The package
// lives under cmd/meshd because only the binary imports it: the sources
// keep their richer types, and the libraries (sources, collections, xds)
// import nothing of cmd/.
package problem
