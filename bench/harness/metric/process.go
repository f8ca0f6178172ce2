package metric

import (
	"runtime"
	"syscall"
	"time"
)

// CPU returns the CPU time (user and system) this process has used; on a
// shared machine it is steadier than wall time. It ends the run through
// Fatalf if the kernel will not say.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// IdleCPU returns the CPU this process uses over d while the caller
// sleeps: what its other goroutines spend when nothing changes.
func IdleCPU(d time.Duration) time.Duration {
	start := CPU()
	time.Sleep(d)
	return CPU() - start
}

// Heap returns HeapInuse and HeapAlloc after two collections, so that
// what the second frees (finalizers, sweeps) is gone too.
func Heap() (inuse, alloc uint64) {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapInuse, s.HeapAlloc
}

// HeapAlloc returns the live heap, HeapAlloc after two collections.
func HeapAlloc() uint64 {
	_, alloc := Heap()
	return alloc
}
