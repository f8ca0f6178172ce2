package folder

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/meshd/meshd/bench/harness/metric"
	"github.com/meshd/meshd/krt"
)

// writeManifests writes pods and services, perFile documents a file, under
// dir.
func writeManifests(tb testing.TB, dir string, pods, services, perFile int) {
	tb.Helper()
	writeKind := func(prefix string, n int, doc func(i int) string) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i%perFile > 0 {
				b.WriteString("---\n")
			}
			b.WriteString(doc(i))
			if i%perFile == perFile-1 || i == n-1 {
				name := filepath.Join(dir, prefix, fmt.Sprintf("%s-%05d.yaml", prefix, i/perFile))
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					tb.Fatal(err)
				}
				if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
					tb.Fatal(err)
				}
				b.Reset()
			}
		}
	}
	writeKind("pods", pods, func(i int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: pod-%d
  namespace: ns-%d
  labels: {app: app-%d, version: v1}
spec:
  nodeName: node-%d
  serviceAccountName: app-%d
  containers:
  - name: app
    image: example.com/app:v1
    ports: [{containerPort: 8080, name: http}]
status:
  phase: Running
  podIP: 10.%d.%d.%d
  podIPs: [{ip: 10.%d.%d.%d}]
`, i, i%100, i%10000, i%50, i%10000, i>>16&255, i>>8&255, i&255, i>>16&255, i>>8&255, i&255)
	})
	writeKind("services", services, func(i int) string {
		return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: app-%d
  namespace: ns-%d
spec:
  selector: {app: app-%d}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, i, i%100, i)
	})
}

// BenchmarkLoad measures the initial load of 100,000 pods and 10,000
// services in files of 1,000 documents, and the heap the loaded objects
// take, per pod (services included).
//
//	go test -run '^$' -bench BenchmarkLoad -benchtime 3x ./sources/folder/
func BenchmarkLoad(b *testing.B) {
	const pods, services = 100_000, 10_000
	dir := b.TempDir()
	writeManifests(b, dir, pods, services, 1000)
	b.ReportAllocs()
	var heap uint64
	cpu0 := metric.CPU()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()

		g := krt.NewGraph()
		s := NewDir(g, dir)
		if err := s.Load(); err != nil {
			b.Fatal(err)
		}

		b.StopTimer()
		if n := s.Inputs().Pods.Len(); n != pods {
			b.Fatalf("%d pods loaded, problems %v", n, s.Problems())
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(s)
		runtime.KeepAlive(g)
		b.StartTimer()
	}
	// CPU time says what the load costs even on a machine shared with
	// other work, where wall time mostly measures waiting.
	b.ReportMetric((metric.CPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(heap)/pods, "heap-bytes/pod")
	b.ReportMetric(float64(pods+services)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}
