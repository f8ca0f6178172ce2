package krttest

import (
	"context"
	"testing"

	"github.com/meshd/meshd/krt"
)

// Flush waits until the writes queued on g (Graph.UpdateLater,
// Static.SetLater, DeleteLater) have committed, and returns the version
// they committed at; it fails t if that takes longer than Timeout. A
// test of a source that queues its writes reads what it fed after Flush.
func Flush(t testing.TB, g *krt.Graph) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	v, err := g.Flush(ctx)
	if err != nil {
		t.Fatalf("krttest.Flush: %v", err)
	}
	return v
}
