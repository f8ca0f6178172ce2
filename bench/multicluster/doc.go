// Command multicluster measures what joining a remote cluster costs: it
// starts a real kube-apiserver (kubetest's binaries) as the remote, fills
// it with -services Services and -pods ready Pods, builds the mesh model
// over an empty local cluster and sources/multicluster, then names the
// remote and waits until the model's ClusterLoadAssignments hold every
// remote endpoint. It prints, per round, the time that took, the CPU
// this process used meanwhile, and the heap the joined remote holds.
//
//	go run ./bench/multicluster -services 1000 -pods 10000 -rounds 3
//
// With -changes N it starts a second remote, east, seeds the local
// cluster in-process with the same services and pods (each cluster on a
// network of its own), and prints what one pod change costs with one,
// two and three clusters: N readiness flips of a local pod of a service
// every cluster has, of a local pod of a service only the local cluster
// has, and of a pod of each joined remote (west; with three clusters
// east too, the remote joined last) through its API server; each timed
// until the model's assignment shows it, with the process's CPU and heap
// allocations per flip.
//
//	go run ./bench/multicluster -services 1000 -pods 10000 -rounds 1 -changes 200
//
// Creating the objects takes minutes on a busy machine; it is not timed.
package main
