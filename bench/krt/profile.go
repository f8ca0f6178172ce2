package main

import (
	"os"
	"runtime/pprof"
	"syscall"
	"time"
)

// profiler writes a CPU profile covering one phase and a heap profile at
// its end. Phases other than the chosen one are ignored.
type profiler struct {
	cpuPath, memPath, phase string
	cpu                     *os.File
}

func (p *profiler) begin(phase string) {
	if p.cpuPath == "" || phase != p.phase {
		return
	}
	f, err := os.Create(p.cpuPath)
	if err != nil {
		fatalf("cpu profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fatalf("cpu profile: %v", err)
	}
	p.cpu = f
}

func (p *profiler) end(phase string) {
	if phase != p.phase {
		return
	}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			fatalf("cpu profile: %v", err)
		}
		p.cpu = nil
	}
	// The build phase's heap profile is taken after the memory phase's GC
	// (heapAfter), so that in-use figures show what the graph retains.
	if phase != "build" {
		p.writeHeap()
	}
}

// heapAfter writes the heap profile of the build phase.
func (p *profiler) heapAfter(phase string) {
	if phase == p.phase && phase == "build" {
		p.writeHeap()
	}
}

func (p *profiler) writeHeap() {
	if p.memPath == "" {
		return
	}
	f, err := os.Create(p.memPath)
	if err != nil {
		fatalf("heap profile: %v", err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		fatalf("heap profile: %v", err)
	}
}

// cpuTime returns the CPU time (user + system) the process has used. Phase
// figures in CPU time are steadier than wall time on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
