package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"text/tabwriter"

	"github.com/meshd/meshd/krt"
)

// writeHeapProfile writes the live heap, after a collection, to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// startCPUProfile starts profiling this process's CPU to file; stop ends
// it and closes the file.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeBuildStats writes, per collection of g, its size, the inputs it
// computed, the seconds their computations took and the reads (fetch
// records) they keep: where a build spends its time and its memory.
func writeBuildStats(w io.Writer, g krt.GraphInfo) {
	reads := make(map[int]int)
	for _, e := range g.Edges {
		reads[e.To] += e.Reads
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "collection\tsize\trecomputes\tseconds\treads\t")
	for _, c := range g.Collections {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%d\t\n", c.Name, c.Size, c.Recomputes, c.RecomputeSeconds, reads[c.ID])
	}
	tw.Flush()
}
