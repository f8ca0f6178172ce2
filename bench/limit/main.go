package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "number of services")
	m := flag.Int("m", 10000, "number of pods")
	flag.Parse()
	if *n <= 0 || *m < *n {
		fatalf("-n, -m: need 0 < n <= m")
	}
	run(*n, *m)
}

func run(n, m int) {
	emit("param_services", n, "count")
	emit("param_pods", m, "count")
	emit("param_gomaxprocs", runtime.GOMAXPROCS(0), "count")
	baseInuse, baseAlloc := heapStats()
	svcs, pods := genServices(n), genPods(n, m)

	c0, t0 := cpuTime(), time.Now()
	out := compute(svcs, pods, "cluster.local")
	dur, cpu := time.Since(t0), cpuTime()-c0
	emit("initial_build", ms(dur), "ms")
	emit("initial_build_pods_per_s", float64(m)/dur.Seconds(), "pods/s")
	emit("initial_build_cpu", ms(cpu), "ms")

	inuse, alloc := heapStats()
	emit("heap_inuse_delta_per_pod", float64(int64(inuse)-int64(baseInuse))/float64(m), "bytes/pod")
	emit("heap_alloc_delta_per_pod", float64(int64(alloc)-int64(baseAlloc))/float64(m), "bytes/pod")
	if err := verify(out, n, m, "cluster.local"); err != nil {
		fatalf("VERIFY FAILED (initial build): %v", err)
	}

	c0, t0 = cpuTime(), time.Now()
	out = compute(svcs, pods, "example.org")
	dur, cpu = time.Since(t0), cpuTime()-c0
	emit("meshconfig_change", ms(dur), "ms")
	emit("meshconfig_workloads_per_s", float64(m)/dur.Seconds(), "workloads/s")
	emit("meshconfig_change_cpu", ms(cpu), "ms")
	if err := verify(out, n, m, "example.org"); err != nil {
		fatalf("VERIFY FAILED (recompute): %v", err)
	}
	emit("result", "PASS", "status")
}

// emit prints one "metric value unit" line.
func emit(metric string, value any, unit string) {
	if v, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, v, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// heapStats returns HeapInuse and HeapAlloc after two collections.
func heapStats() (inuse, alloc uint64) {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapInuse, s.HeapAlloc
}

// cpuTime returns the CPU time (user + system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}
