// Command gcp-snapshot serves xds/internal/bench's workload with
// go-control-plane's SnapshotCache (ADS mode) and its SotW ADS server, over
// real gRPC on 127.0.0.1, and prints one "metric value unit" line per
// figure, under xds/internal/bench's metric names and with its flags (-n,
// -m, -p, -changes), so that a run of each compares line by line
// (bench/compare.sh prints them side by side).
//
// The model: N services svc-i in namespace ns-(i%10), one port 7070; M
// pods, pod j backing service j%N at a unique IP 10.x.y.z. Per service the
// snapshot holds an API Listener whose HttpConnectionManager takes its
// routes over ADS, a RouteConfiguration (both named
// svc-i.ns-k.svc.cluster.local:7070), an EDS Cluster and a
// ClusterLoadAssignment (both named outbound|7070||svc-i.ns-k.svc.cluster.local).
// A change moves one pod (chosen by -seed, as xds/internal/bench chooses)
// to a fresh IP, rebuilds the whole snapshot from the model, the way
// go-control-plane users do, and sets it for every node. With -versions
// global (the default, as in go-control-plane's examples) every change
// bumps the one version of the snapshot, so every client is sent all four
// types again; -versions per-type bumps only the load assignments'.
//
// The P clients are the very ones meshd's bench measures: the
// xds/internal/bench binary run with -child (named by -client), in a
// process of its own, so that this process's getrusage is the server's
// CPU alone. Each client has its own connection and one SotW ADS stream
// that wants everything (wildcard LDS and CDS, then the routes and load
// assignments those name) and ACKs every response.
//
// It is a module of its own, outside the root go.work, like the other
// comparison workloads under bench/:
//
//	go build -o /tmp/xdsbench ./xds/internal/bench
//	cd bench/gcp-snapshot && GOWORK=off go run . -client /tmp/xdsbench -n 100 -m 1000 -p 10
package main
