// Package multicluster joins remote Kubernetes clusters into one mesh
// while it runs: each cluster's Services, Pods, EndpointSlices and Nodes
// are watched by a kube source of its own, built in a krt sub-graph when
// the cluster is named and stopped (its collections removed from the
// graph) when it no longer is.
//
// The loop, in the program:
//
//  1. r := multicluster.New(g, opts...): the joined collections, empty;
//  2. in := sources.JoinInputs(g, local, r.Inputs().Complete(g, "remotes")):
//     the model reads the local cluster first, the remotes after;
//  3. r.Apply(origin, clusters, err) whenever the clusters an origin names
//     change (a Secret labelled LabelSecret was added, changed or deleted:
//     ClustersOfSecret, or WatchSecrets, which does it all);
//  4. go r.Run(ctx), which does the rest until ctx ends.
//
// # Consistency
//
// A cluster joins once its informers have listed everything, in one
// transaction, so the mesh never sees half a cluster; until then it adds
// nothing and holds nothing back. A changed kubeconfig (rotated
// credentials) starts a second generation beside the first; once it has
// listed, one transaction replaces the first's collections with its own,
// so every item that is in both stays (no delete, no add) and then the
// first generation stops. A removed cluster leaves the joins in one
// transaction, then its source and sub-graph stop.
//
// A joined cluster whose API server stops answering keeps its last items.
// Once it has failed continuously past a grace (WithStaleFailures requests
// in a row over at least WithStaleGrace), they are flagged stale, in
// Status and in the inputs (sources.StaleCluster); the first request that
// succeeds clears the flag, so a brief blip or a flapping server flags
// nothing. After WithStaleTimeout of failing they leave the mesh until it
// answers again. Health is read from the clients' own requests (Health),
// so a cluster that answers nothing is seen as such within one informer
// retry.
//
// Objects from remote clusters carry their cluster's name in the
// annotation sources.AnnotationCluster; Pods, EndpointSlices and Nodes are
// keyed "cluster/namespace/name" (sources.ClusterKey), Services
// "namespace/name": one Service spans every cluster that has it (namespace
// sameness).
package multicluster
