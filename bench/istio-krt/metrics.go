package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// emit prints one "metric value unit" line, the format every bench in
// this repository prints and bench/compare.sh reads.
func emit(metric string, value any, unit string) {
	if v, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, v, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// heapStats returns HeapInuse and HeapAlloc after two collections.
func heapStats() (inuse, alloc uint64) {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapInuse, s.HeapAlloc
}

// cpuTime returns the CPU time (user + system) the process has used; on a
// shared machine it is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	idx := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(idx, len(sorted)-1))]
}

func waitOrTimeout(ch <-chan struct{}, d time.Duration, what string, t *tracker) {
	select {
	case <-ch:
	case <-time.After(d):
		fatalf("timeout after %v waiting for %s (%d expected IPs still unseen)", d, what, t.pendingCount())
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}
