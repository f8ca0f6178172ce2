package ctl

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/cmd/meshd/internal/problem"
)

// Status is the answer of meshd status -o json.
type Status struct {
	// Version is the graph's version; Collections how many it has, and
	// Unsynced those that do not hold their complete initial state yet.
	Version     uint64   `json:"version"`
	Collections int      `json:"collections"`
	Unsynced    []string `json:"unsynced"`
	// Sources are the input collections: those that read no other.
	Sources []Source `json:"sources"`
	// Problems are the current problems, errors first; Errors counts them.
	Problems []problem.Problem `json:"problems"`
	Errors   int               `json:"errors"`
}

// Source is one input collection.
type Source struct {
	Name   string `json:"name"`
	Items  int    `json:"items"`
	Synced bool   `json:"synced"`
}

func runStatus(args []string, out io.Writer) error {
	var c common
	if _, err := parse("status", args, out, &c, nil); err != nil {
		return err
	}
	var g debugui.GraphSummary
	if err := getJSON(c.addr, "graph", nil, &g); err != nil {
		return err
	}
	var p debugui.ProblemsResult
	if err := getJSON(c.addr, "problems", nil, &p); err != nil {
		return err
	}
	s := newStatus(g, p.Problems)
	if c.output == "json" {
		return writeJSON(out, s)
	}
	return writeStatus(out, s)
}

// newStatus summarizes a graph and its problems.
func newStatus(g debugui.GraphSummary, problems []problem.Problem) Status {
	s := Status{Version: g.Version, Collections: len(g.Collections), Unsynced: []string{}, Sources: []Source{}, Problems: problems}
	reads := map[int]bool{}
	for _, e := range g.Edges {
		reads[e.To] = true
	}
	for _, c := range g.Collections {
		if !c.Synced {
			s.Unsynced = append(s.Unsynced, c.Name)
		}
		if !reads[c.ID] && c.Kind == "static" {
			s.Sources = append(s.Sources, Source{Name: c.Name, Items: c.Size, Synced: c.Synced})
		}
	}
	for _, p := range problems {
		if p.Severity != problem.SeverityWarning {
			s.Errors++
		}
	}
	return s
}

func writeStatus(out io.Writer, s Status) error {
	sync := "all synced"
	if n := len(s.Unsynced); n > 0 {
		sync = fmt.Sprintf("%d not synced: %v", n, s.Unsynced)
	}
	fmt.Fprintf(out, "graph version %d, %d collections, %s\n\n", s.Version, s.Collections, sync)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tITEMS\tSYNCED")
	for _, src := range s.Sources {
		fmt.Fprintf(tw, "%s\t%d\t%v\n", src.Name, src.Items, src.Synced)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%d problems, %d errors\n", len(s.Problems), s.Errors)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, p := range s.Problems {
		sev := p.Severity
		if sev == "" {
			sev = problem.SeverityError
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sev, p.Source, p.Object, p.Error)
	}
	return tw.Flush()
}
