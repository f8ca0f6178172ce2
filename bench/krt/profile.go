package main

import (
	"os"
	"runtime/pprof"

	"github.com/meshd/meshd/bench/harness/metric"
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
		metric.Fatalf("cpu profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		metric.Fatalf("cpu profile: %v", err)
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
			metric.Fatalf("cpu profile: %v", err)
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
		metric.Fatalf("heap profile: %v", err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		metric.Fatalf("heap profile: %v", err)
	}
}
