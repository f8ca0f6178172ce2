package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshd/meshd/krt"
)

// Describer is what the graph collector reads; *krt.Graph implements it.
type Describer interface {
	Describe() krt.GraphInfo
}

// GraphCollector is a prometheus.Collector over a krt graph. Every scrape
// calls Describe once, so all series of a scrape come from one consistent
// description of the graph.
type GraphCollector struct {
	g Describer

	version, size, synced, failing, conflicts *prometheus.Desc
	recomputes, events, errs, duration        *prometheus.Desc
	stalls, stalled                           *prometheus.Desc
	queueWaiting, queueCommitted              *prometheus.Desc
	queueBatches, queueDropped                *prometheus.Desc
}

// NewGraphCollector returns a collector of g's per-collection series. Each
// series carries the labels collection (its name) and kind (static,
// collection, many, singleton, join). Two collections that share a name are
// told apart by suffixing the later one's name with "#<id>", since duplicate
// series would fail the whole scrape.
func NewGraphCollector(g Describer) *GraphCollector {
	labels := []string{"collection", "kind"}
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("meshd_krt_collection_"+name, help, labels, nil)
	}
	return &GraphCollector{
		g:          g,
		version:    prometheus.NewDesc("meshd_krt_graph_version", "Version of the last committed krt transaction.", nil, nil),
		size:       d("size", "Number of items in the collection."),
		synced:     d("synced", "1 once the collection holds its complete initial state, else 0."),
		failing:    d("failing_inputs", "Inputs whose last computation failed and that serve their last good output."),
		conflicts:  d("conflicts", "Output keys claimed by several inputs."),
		recomputes: d("recomputes_total", "Inputs the collection has processed: transformations run, join keys re-evaluated."),
		events:     d("events_total", "Outputs the collection added, changed or deleted: the events it emitted."),
		errs:       d("errors_total", "Failed computations (errors, panics, key conflicts) recorded by the collection."),
		duration:   d("recompute_duration_seconds", "Duration of the collection's transformations."),
		stalls:     d("stalls_total", "Transformations of the collection reported as running past krt's stall threshold."),
		stalled:    d("stalled_seconds", "How long the collection's stalled transformation has been running; 0 when none is."),

		queueWaiting:   prometheus.NewDesc("meshd_krt_queue_waiting", "Queued writes (informer events) not yet committed.", nil, nil),
		queueCommitted: prometheus.NewDesc("meshd_krt_queue_committed_total", "Queued writes committed.", nil, nil),
		queueBatches:   prometheus.NewDesc("meshd_krt_queue_batches_total", "Transactions that committed queued writes.", nil, nil),
		queueDropped:   prometheus.NewDesc("meshd_krt_queue_dropped_total", "Queued writes dropped because they panicked (logged with their stack).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *GraphCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.version, c.size, c.synced, c.failing, c.conflicts,
		c.recomputes, c.events, c.errs, c.duration, c.stalls, c.stalled,
		c.queueWaiting, c.queueCommitted, c.queueBatches, c.queueDropped,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *GraphCollector) Collect(ch chan<- prometheus.Metric) {
	info := c.g.Describe()
	ch <- prometheus.MustNewConstMetric(c.version, prometheus.GaugeValue, float64(info.Version))
	q := info.Queue
	ch <- prometheus.MustNewConstMetric(c.queueWaiting, prometheus.GaugeValue, float64(q.Waiting))
	ch <- prometheus.MustNewConstMetric(c.queueCommitted, prometheus.CounterValue, float64(q.Committed))
	ch <- prometheus.MustNewConstMetric(c.queueBatches, prometheus.CounterValue, float64(q.Batches))
	ch <- prometheus.MustNewConstMetric(c.queueDropped, prometheus.CounterValue, float64(q.Dropped))
	seen := make(map[string]bool, len(info.Collections))
	bounds := krt.HistogramBounds()
	for _, ci := range info.Collections {
		name := ci.Name
		if seen[name] {
			name += "#" + strconv.Itoa(ci.ID)
		}
		seen[name] = true
		lv := []string{name, ci.Kind}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
		}
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
		}
		gauge(c.size, float64(ci.Size))
		gauge(c.synced, boolFloat(ci.Synced))
		gauge(c.failing, float64(ci.FailingInputs))
		gauge(c.conflicts, float64(ci.Conflicts))
		counter(c.recomputes, ci.Recomputes)
		counter(c.events, ci.EventsEmitted)
		counter(c.errs, ci.Errors)
		counter(c.stalls, ci.Stalls)
		stalled := 0.0
		if st := info.Stalled; st != nil && st.Collection == ci.Name {
			stalled = st.For.Seconds()
		}
		gauge(c.stalled, stalled)
		count, buckets := cumulative(ci.RecomputeBuckets, bounds)
		ch <- prometheus.MustNewConstHistogram(c.duration, count, ci.RecomputeSeconds, buckets, lv...)
	}
}

// cumulative turns krt's per-bucket counts (one per bound, then one for
// +Inf) into Prometheus's cumulative buckets keyed by upper bound, and the
// total count, which stands for the +Inf bucket.
func cumulative(counts []uint64, bounds []float64) (uint64, map[float64]uint64) {
	buckets := make(map[float64]uint64, len(bounds))
	var total uint64
	for i, n := range counts {
		total += n
		if i < len(bounds) {
			buckets[bounds[i]] = total
		}
	}
	return total, buckets
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
