package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"time"
)

// emit prints one "metric value unit" line, under the names
// xds/internal/bench prints.
func emit(metric string, value any, unit string) {
	if f, ok := value.(float64); ok {
		fmt.Printf("%s %.3f %s\n", metric, f, unit)
		return
	}
	fmt.Printf("%s %v %s\n", metric, value, unit)
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// cpuSelf returns the CPU time (user and system) this process has used:
// the server's alone, since the clients run in a process of their own.
func cpuSelf() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAlloc returns the live heap after two collections.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	return st.HeapAlloc
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// percentile returns the nearest-rank percentile of samples.
func percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FATAL: "+format+"\n", args...)
	os.Exit(1)
}
