package krt_test

import (
	"testing"
	"time"

	"github.com/meshd/meshd/krt"
)

func TestHistogramBounds(t *testing.T) {
	b := krt.HistogramBounds()
	if len(b) == 0 || b[0] != time.Microsecond.Seconds() {
		t.Fatalf("bounds %v, want them to start at 1µs", b)
	}
	for i := 1; i < len(b); i++ {
		if b[i] != 4*b[i-1] {
			t.Fatalf("bound %d = %v, want 4 × %v", i, b[i], b[i-1])
		}
	}
	b[0] = 42
	if again := krt.HistogramBounds(); again[0] != time.Microsecond.Seconds() {
		t.Fatalf("changing a returned slice changed the bounds: %v", again)
	}
}

// TestRecomputeLandsInItsBucket checks a single recompute is counted in
// the bucket whose bounds hold its duration.
func TestRecomputeLandsInItsBucket(t *testing.T) {
	g, in := newStatic[Num]()
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, n Num) *Num {
		time.Sleep(time.Duration(n.N) * time.Microsecond)
		return &n
	}, krt.WithName("slow"))
	in.Set(Num{"a", 300})
	ci := info(t, g, "slow")
	bounds := krt.HistogramBounds()
	if len(ci.RecomputeBuckets) != len(bounds)+1 {
		t.Fatalf("%d buckets for %d bounds, want one more for +Inf", len(ci.RecomputeBuckets), len(bounds))
	}
	bucket, total := -1, uint64(0)
	for i, n := range ci.RecomputeBuckets {
		total += n
		if n > 0 {
			bucket = i
		}
	}
	if total != 1 || ci.Recomputes != 1 {
		t.Fatalf("buckets %v, recomputes %d, want one of each", ci.RecomputeBuckets, ci.Recomputes)
	}
	d := ci.RecomputeSeconds
	if d < 300e-6 {
		t.Fatalf("recompute took %vs, want at least the 300µs slept", d)
	}
	if bucket < len(bounds) && d > bounds[bucket] || bucket > 0 && d <= bounds[bucket-1] {
		t.Fatalf("a %vs recompute is in bucket %d of bounds %v", d, bucket, bounds)
	}
}
