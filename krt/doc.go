// Package krt is an incremental dataflow engine of typed collections.
//
// A program builds a [Graph], feeds it inputs through [Static] collections and
// derives further collections from them with [NewCollection],
// [NewManyCollection], [NewSingleton] and [Join]. A transformation reads other
// collections with [Fetch] or [FetchOne]; every read is recorded as a
// dependency, so when an input changes only the outputs whose recorded reads
// are affected are recomputed. [PartialFetch] depends on a projection of
// each item only, and a [Trigger] stands for state outside the graph.
// [NewStatusCollection] derives outputs and a status about each input in
// one transformation. Handlers registered with [Collection.Register]
// receive the resulting events in ordered batches;
// [Registration.WaitVersion] waits until a handler has caught up with a
// version. Package krttest helps test code built on krt.
//
// Collections may be created while the graph runs. Those created in a
// [SubGraph] are removed together by [SubGraph.Stop], and [NestedJoin]
// joins a collection of collections, such as one per remote cluster.
//
// The embedding loop:
//
//  1. g := krt.NewGraph(krt.WithLogger(logger))
//  2. Create inputs: pods := krt.NewStatic[Pod](g, krt.WithName("pods"))
//  3. Derive: workloads := krt.NewCollection(g, pods, buildWorkload)
//  4. Register handlers; start delivery with go g.Run(ctx).
//  5. Write inputs (pods.Set, pods.Delete, g.Update for several at once).
//  6. Cancel ctx; Run returns once every goroutine it started has ended.
//
// Constructors leave no goroutine running. Run starts one goroutine per
// registered handler and one watchdog that reports a transformation
// running past the stall threshold ([WithStallThreshold]); propagation
// happens in the goroutine that writes an input. When one collection has
// many dirty inputs in a transaction, they are computed on up to
// GOMAXPROCS goroutines ([WithParallelism]), which also file their reads
// and all end before it commits; the results are applied in a
// serial run's order, so outputs and events do not change, but a
// transformation must be safe to call concurrently for different inputs.
//
// # Consistency
//
// Every write (one operation, a batch, or a [Graph.Update] over several
// collections) is a transaction. Transactions run one at a time: the
// writer applies one and propagates it through every derived collection,
// in creation order, before the write returns; the transaction then
// commits with a new version, one greater than the previous.
//
//   - Readers never wait for a transaction, and never see part of one.
//     Get, List, Len, Index lookups, [Graph.Describe], [Graph.Items] and
//     Register read the last committed version at once, even while a
//     transformation blocks. Each call reads one version; two calls may
//     read two. A commit is visible when the write returns.
//   - [Graph.Read] hands out a [Snapshot]: one committed version of every
//     collection. Reads through it ([Collection.At] and the [View] it
//     returns) all observe that version until Read returns, and holding it
//     delays no writer; commits meanwhile keep the old values of what they
//     change until then.
//   - Each handler receives, per transaction, one [Batch] holding the net
//     change of that transaction (an item added then deleted within it yields
//     nothing), tagged with the committed version. The version is
//     published before its batches are handed out, so a handler that reads
//     on receipt sees at least that version. Handlers never observe an
//     intermediate output that the quiescent graph would not produce for
//     the same inputs.
//   - An output equal to its previous value (by an Equals method when the type
//     has one, else reflect.DeepEqual) emits no event and triggers no
//     downstream recomputation.
//
// Transformations must read other collections only through Fetch and
// FetchOne, which see the transaction's own state and record the
// dependency. Get, List, an index lookup or Graph.Read called from inside
// a transformation would read the last committed version instead, and a
// write from one would wait for the transaction running it; both panic,
// with a message naming the fix, and the panic is recorded as the
// computation's error.
//
// Dependencies flow from collections created earlier to collections created
// later; a transformation that fetches a later collection still converges,
// but that collection is recomputed twice in the transaction. A genuine
// cycle is cut after a bounded number of passes and reported as [ErrCycle].
//
// # Failures
//
// A transformation that panics, or calls [HandlerContext.Fail], keeps its last
// good outputs; the error is recorded on the collection (see
// [Graph.Describe]) and the input is retried when it, or anything it read,
// changes. Two inputs producing the same output key is reported as
// [ErrKeyConflict]; the input with the smaller key wins.
package krt
