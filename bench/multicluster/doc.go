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
// Creating the objects takes minutes on a busy machine; it is not timed.
package main
