package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources/multicluster"
)

// The networks of the clusters' pod IPs: one each, so that no endpoint
// of one cluster hides another's (the model keeps one per address).
const (
	netWest  = 10
	netLocal = 11
	netEast  = 12
)

// changeResult is what flipping one pod's readiness cost, per change.
type changeResult struct {
	p50, p99 time.Duration
	cpu      time.Duration
	allocs   float64
	// endpoints is the size of the changed pod's assignment.
	endpoints int
}

// flipper sets one pod's readiness, in whichever cluster it lives.
type flipper func(ready bool) error

// change is one row's pod: where it lives, its service's assignment,
// its IP and how to flip it.
type change struct {
	what, cla, ip string
	flip          flipper
}

// remote is a remote cluster of the change table: its kubeconfig, a
// client of its API server, and the network of its pod IPs.
type remote struct {
	name       string
	kubeconfig []byte
	client     kubernetes.Interface
	network    byte
}

// changeTable seeds the local cluster in this process, then flips the
// readiness of one local pod with the local cluster alone, with west
// joined and with east too; with remotes joined it also flips a pod of
// each joined remote through its API server, so a change in the remote
// joined last (east) is timed apart from one in the local cluster and in
// the first remote. It prints a row per cluster count and changed pod.
func changeTable(ctx context.Context, m *mesh, remotes []remote, services, pods, changes int) error {
	shared, solo := seedLocal(m, services, pods)
	rows := []change{
		{"local, shared service", claOf(shared), ipOf(shared), m.localFlipper(shared)},
		{"local, solo service", claOf(solo), ipOf(solo), m.localFlipper(solo)},
	}
	// clusters[n] are the remotes joined in step n (0: none), rows[:nrows[n]] its rows.
	clusters, nrows := [][]multicluster.Cluster{nil}, []int{len(rows)}
	for _, r := range remotes {
		flip, err := remoteFlipper(ctx, r.name, r.client)
		if err != nil {
			return err
		}
		pod := podObject(0, services, r.network)
		rows = append(rows, change{r.name + ", shared service (API server)", claOf(pod), ipOf(pod), flip})
		joined := append(slices.Clone(clusters[len(clusters)-1]), multicluster.Cluster{Name: r.name, Kubeconfig: r.kubeconfig})
		clusters, nrows = append(clusters, joined), append(nrows, len(rows))
	}
	fmt.Printf("\n%d readiness flips per row; the shared service spans every cluster, the solo one is local only\n\n", changes)
	fmt.Println("| clusters | pod changed | p50 | p99 | CPU per change | allocs per change | its service's endpoints |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|")
	for n, joined := range clusters {
		if joined != nil {
			m.r.Apply("bench", joined, nil)
			m.waitEndpoints((len(joined)+1)*pods + 1)
		}
		// The join's garbage is collected first: this measures changes,
		// not the collection of what a join left behind.
		runtime.GC()
		for _, row := range rows[:nrows[n]] {
			r, err := m.measureChanges(changes, row)
			if err != nil {
				return fmt.Errorf("%s: %w", row.what, err)
			}
			fmt.Printf("| %d | %s | %.2f ms | %.2f ms | %.2f ms | %.0f | %d |\n", n+1, row.what,
				metric.MS(r.p50), metric.MS(r.p99), metric.MS(r.cpu), r.allocs, r.endpoints)
		}
	}
	return nil
}

// claOf names the assignment of pod's service's port 80.
func claOf(pod *corev1.Pod) string {
	return collections.ClusterName(80, pod.Labels["app"]+"."+benchNamespace+".svc.cluster.local")
}

// seedLocal fills the local cluster with the remote's services and pods
// (on its own network) and a solo service of one pod, in one
// transaction, and returns pod 0 of svc-0 and the solo pod.
func seedLocal(m *mesh, services, pods int) (shared, solo *corev1.Pod) {
	items := make([]any, 0, services+pods+2)
	for i := range services {
		items = append(items, serviceObject(i))
	}
	for i := range pods {
		items = append(items, podObject(i, services, netLocal))
	}
	soloSvc := serviceObject(services) // no remote has it
	solo = podObject(pods, services, netLocal)
	solo.Name, solo.Labels = "solo", map[string]string{"app": soloSvc.Name}
	m.local.Set(append(items, soloSvc, solo)...)
	m.waitEndpoints(pods + 1)
	return podObject(0, services, netLocal), solo
}

// localFlipper flips pod in the local cluster, an in-process write.
func (m *mesh) localFlipper(pod *corev1.Pod) flipper {
	return func(ready bool) error {
		m.local.Set(withReady(pod, ready))
		return nil
	}
}

// remoteFlipper flips the pod-0 of the remote cluster named name through
// its API server: one status write per change.
func remoteFlipper(ctx context.Context, name string, c kubernetes.Interface) (flipper, error) {
	pods := c.CoreV1().Pods(benchNamespace)
	pod, err := pods.Get(ctx, "pod-0", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s's pod-0: %w", name, err)
	}
	return func(ready bool) error {
		p, err := pods.UpdateStatus(ctx, withReady(pod, ready), metav1.UpdateOptions{})
		if err == nil {
			pod = p
		}
		return err
	}, nil
}

// measureChanges flips c's pod's readiness n times (rounded up to even,
// so it ends ready) and times each flip until its endpoint shows it in
// its assignment. CPU and allocations are the process's over all flips.
func (m *mesh) measureChanges(n int, c change) (changeResult, error) {
	n += n % 2
	changed := make(chan struct{}, 1)
	reg := m.model.ClusterLoadAssignments.Register(func(krt.Batch[collections.Resource[*endpointv3.ClusterLoadAssignment]]) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer reg.Unregister()
	// Two flips first, untimed: the first change of a row warms caches.
	for i := range 2 {
		if _, err := m.flipAndWait(c, i%2 == 1, changed); err != nil {
			return changeResult{}, err
		}
	}
	samples := make([]time.Duration, 0, n)
	cpu0, allocs0 := metric.CPU(), heapObjects()
	var size int
	for i := range n {
		t0 := time.Now()
		var err error
		if size, err = m.flipAndWait(c, i%2 == 1, changed); err != nil {
			return changeResult{}, err
		}
		samples = append(samples, time.Since(t0))
	}
	return changeResult{p50: metric.Percentile(samples, 0.5), p99: metric.Percentile(samples, 0.99),
		cpu: (metric.CPU() - cpu0) / time.Duration(n), allocs: float64(heapObjects()-allocs0) / float64(n), endpoints: size}, nil
}

// flipAndWait sets c's pod's readiness and waits, woken by changed, until
// its endpoint shows it; it returns the size of the assignment.
func (m *mesh) flipAndWait(c change, ready bool, changed <-chan struct{}) (int, error) {
	if err := c.flip(ready); err != nil {
		return 0, err
	}
	deadline := time.After(30 * time.Second)
	size := m.endpointHealth(c, ready)
	for ; size == 0; size = m.endpointHealth(c, ready) {
		select {
		case <-changed:
		case <-deadline:
			return 0, fmt.Errorf("endpoint %s not ready=%v within 30s", c.ip, ready)
		}
	}
	return size, nil
}

// endpointHealth returns the number of endpoints of c's assignment when
// c's endpoint in it has ready's health, else 0.
func (m *mesh) endpointHealth(c change, ready bool) int {
	want := corev3.HealthStatus_UNHEALTHY
	if ready {
		want = corev3.HealthStatus_HEALTHY
	}
	res, _ := m.model.ClusterLoadAssignments.Get(c.cla)
	cla := res.Message()
	if cla == nil {
		return 0
	}
	n, ok := 0, false
	for _, l := range cla.Endpoints {
		for _, e := range l.LbEndpoints {
			n++
			if e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress() == c.ip {
				ok = e.HealthStatus == want
			}
		}
	}
	if !ok {
		return 0
	}
	return n
}

func ipOf(p *corev1.Pod) string { return p.Status.PodIP }

// heapObjects is the count of heap objects allocated so far, read
// without stopping the world.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
