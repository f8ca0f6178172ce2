package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/meshd/meshd/krt"
)

type item struct{ Name, Value string }

func (i item) ResourceName() string { return i.Name }

// testGraph builds inputs -> upper, where upper fails for values "bad".
func testGraph() (*krt.Graph, krt.Static[item]) {
	g := krt.NewGraph()
	in := krt.NewStatic[item](g, krt.WithName("inputs"))
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, i item) *item {
		if i.Value == "bad" {
			ctx.Fail(errors.New("bad value"))
			return nil
		}
		return &item{Name: i.Name, Value: strings.ToUpper(i.Value)}
	}, krt.WithName("upper"))
	return g, in
}

func TestGraphCollector(t *testing.T) {
	g, in := testGraph()
	in.Set(item{"a", "x"}, item{"b", "y"})
	in.Set(item{"a", "bad"})
	in.SetLater(item{"c", "z"}) // a queued write, as the informers make
	if _, err := g.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	got := gatherFamilies(t, NewRegistry(g))
	tests := []struct {
		name, collection string
		want             float64
	}{
		{"meshd_krt_collection_size", "inputs", 3},
		{"meshd_krt_collection_size", "upper", 3}, // a keeps its last good output
		{"meshd_krt_collection_synced", "upper", 1},
		{"meshd_krt_collection_failing_inputs", "upper", 1},
		{"meshd_krt_collection_errors_total", "upper", 1},
		{"meshd_krt_collection_recomputes_total", "upper", 4},
		{"meshd_krt_collection_events_total", "inputs", 4}, // add a, add b, update a, add c
		{"meshd_krt_collection_events_total", "upper", 3},  // the failed update emits nothing
		{"meshd_krt_collection_recompute_duration_seconds", "upper", 4},
		{"meshd_krt_collection_stalls_total", "upper", 0},
		{"meshd_krt_collection_stalled_seconds", "upper", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.collection, func(t *testing.T) {
			if v := seriesValue(t, got, tc.name, tc.collection); v != tc.want {
				t.Errorf("%s{collection=%q} = %v, want %v", tc.name, tc.collection, v, tc.want)
			}
		})
	}
	for fam, want := range map[string]float64{"meshd_krt_queue_waiting": 0, "meshd_krt_queue_committed_total": 1, "meshd_krt_queue_batches_total": 1} {
		if m := got[fam].GetMetric(); len(m) != 1 || m[0].GetGauge().GetValue()+m[0].GetCounter().GetValue() != want {
			t.Errorf("%s = %v, want %v", fam, m, want)
		}
	}
	if v := got["meshd_krt_graph_version"].GetMetric()[0].GetGauge().GetValue(); v != float64(g.Version()) {
		t.Errorf("graph version = %v, want %d", v, g.Version())
	}
	// Counters that always moved together are exported once.
	for _, fam := range []string{"meshd_krt_collection_inputs_processed_total", "meshd_krt_collection_outputs_changed_total"} {
		if got[fam] != nil {
			t.Errorf("family %s is a twin of another and should not exist", fam)
		}
	}
	for _, fam := range []string{"go_goroutines", "process_start_time_seconds"} {
		if got[fam] == nil {
			t.Errorf("runtime family %s missing", fam)
		}
	}
}

// TestGraphCollectorLint runs Prometheus's own metric lint over the
// graph collector's output.
func TestGraphCollectorLint(t *testing.T) {
	g, in := testGraph()
	in.Set(item{"a", "x"})
	problems, err := testutil.CollectAndLint(NewGraphCollector(g))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

func TestDuplicateNamesStayDistinct(t *testing.T) {
	g := krt.NewGraph()
	krt.NewStatic[item](g, krt.WithName("same"))
	krt.NewStatic[item](g, krt.WithName("same"))
	r := prometheus.NewRegistry()
	r.MustRegister(NewGraphCollector(g))
	if _, err := r.Gather(); err != nil {
		t.Fatalf("gather with duplicate collection names: %v", err)
	}
	if n := testutil.CollectAndCount(NewGraphCollector(g), "meshd_krt_collection_size"); n != 2 {
		t.Errorf("size series = %d, want 2", n)
	}
}

func TestCumulative(t *testing.T) {
	tests := []struct {
		name   string
		counts []uint64
		bounds []float64
		total  uint64
		want   map[float64]uint64
	}{
		{"empty", []uint64{0, 0, 0}, []float64{1, 2}, 0, map[float64]uint64{1: 0, 2: 0}},
		{"spread", []uint64{1, 2, 3}, []float64{1, 2}, 6, map[float64]uint64{1: 1, 2: 3}},
		{"only inf", []uint64{0, 0, 4}, []float64{1, 2}, 4, map[float64]uint64{1: 0, 2: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			total, got := cumulative(tc.counts, tc.bounds)
			if total != tc.total {
				t.Errorf("total = %d, want %d", total, tc.total)
			}
			for b, w := range tc.want {
				if got[b] != w {
					t.Errorf("bucket %v = %d, want %d", b, got[b], w)
				}
			}
		})
	}
}

// gatherFamilies gathers r and returns its families by name.
func gatherFamilies(t *testing.T, r prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf
	}
	return got
}

// seriesValue returns the value of the series of family name labelled with
// collection: a gauge's or counter's value, a histogram's sample count.
func seriesValue(t *testing.T, fams map[string]*dto.MetricFamily, name, collection string) float64 {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		t.Fatalf("no family %s", name)
	}
	for _, m := range mf.GetMetric() {
		if label(m, "collection") == collection {
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no series %s{collection=%q}", name, collection)
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// fakeGraph is an empty graph description.
type fakeGraph struct{}

func (fakeGraph) Describe() krt.GraphInfo { return krt.GraphInfo{} }

// TestStallSeries blocks a transformation past krt's stall threshold and
// checks that the scrape shows it while it lasts.
func TestStallSeries(t *testing.T) {
	g := krt.NewGraph(krt.WithStallThreshold(10 * time.Millisecond))
	in := krt.NewStatic[item](g, krt.WithName("inputs"))
	release := make(chan struct{})
	krt.NewCollection(g, in, func(ctx krt.HandlerContext, i item) *item {
		if i.Value == "stuck" {
			<-release
		}
		return &i
	}, krt.WithName("slow"))
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- g.Run(ctx) }()
	defer func() { cancel(); <-runDone }()
	wrote := make(chan struct{})
	go func() { in.Set(item{"a", "stuck"}); close(wrote) }()
	defer func() { close(release); <-wrote }()
	for deadline := time.Now().Add(5 * time.Second); g.Describe().Stalled == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no stall reported within 5s")
		}
	}
	got := gatherFamilies(t, NewRegistry(g))
	if v := seriesValue(t, got, "meshd_krt_collection_stalls_total", "slow"); v != 1 {
		t.Errorf("stalls_total{slow} = %v, want 1", v)
	}
	if v := seriesValue(t, got, "meshd_krt_collection_stalled_seconds", "slow"); v < 0.01 {
		t.Errorf("stalled_seconds{slow} = %v, want at least the 10ms threshold", v)
	}
	if v := seriesValue(t, got, "meshd_krt_collection_stalled_seconds", "inputs"); v != 0 {
		t.Errorf("stalled_seconds{inputs} = %v, want 0", v)
	}
}
