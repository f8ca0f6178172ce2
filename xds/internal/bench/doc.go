// Command bench measures meshd's ADS server on the workload that
// bench/gcp-snapshot serves with go-control-plane: N services svc-i in
// namespaces ns-(i%10), one gRPC port 7070; M ready pods, pod j backing service j%N;
// P SotW ADS clients that want everything (wildcard LDS, the routes the
// listeners name, wildcard CDS, the clusters' load assignments); and
// -changes single-pod IP moves. It takes bench/gcp-snapshot's flags (-n,
// -m, -p, -changes) and prints one "metric value unit" line per figure,
// under the same names, so that runs compare as ratios (bench/compare.sh).
//
// The objects are Kubernetes Services and Pods in static krt inputs; the
// mesh model (collections.Build) derives the xDS resources and the server
// subscribes to them. A change sets one Pod: the model recomputes its
// workload, endpoints and load assignment, and the server pushes that one
// load assignment to the streams subscribed to it.
//
// With -reconnect, the bench then starts a second server over a model
// built anew from the same objects and moves every client to it, first
// naming what it holds (SotW version_info, Delta
// initial_resource_versions), then again without, as when a replica dies
// and its proxies land on a survivor (reconnect.go).
//
// The clients run in a child process (this binary with -child), so that the
// parent's CPU (getrusage) is the server's alone.
package main
