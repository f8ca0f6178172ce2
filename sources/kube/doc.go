// Package kube is a source that watches a Kubernetes API server with
// client-go informers and feeds what it sees into krt collections: the
// kinds of sources.Inputs (Gateway API routes when their CRDs are
// installed) and, through the dynamic client, any other resource added with
// AddDynamic.
//
// Create the source with New, add further collections, then call Run, which
// starts the informers and stops them when its context ends:
//
//	src := kube.New(g, clients, kube.WithLogger(logger))
//	widgets := kube.AddDynamic[*v1.Widget](src, widgetsGVR, kube.Watch{Namespace: "shop"})
//	go src.Run(ctx)
//	krt.WaitSynced(ctx, src.Inputs().Pods, widgets)
//
// # Consistency
//
// Each collection is a krt.Static fed by one informer. Its initial listing
// is written as one transaction once the informer has delivered it, and the
// collection is synced only then. Later adds, updates and deletes (including
// deletes the informer only learns of on a relist) are written one by one,
// in the order the informer delivers them. The writes are idempotent, so a
// relist after a watch error neither loses nor duplicates items. Watch
// errors are logged and counted (Stats).
//
// Objects are shared with the informer's cache and must not be modified.
// By default the informers drop metadata.managedFields before caching, which
// saves memory; Watch.Transform replaces that.
package kube
