package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// writeTable prints lay as a Markdown table of the medians of runs, keyed
// by column name. Metrics no side has are left out.
func writeTable(w io.Writer, lay layout, runs map[string][]runOutput) {
	targets := false
	for _, m := range lay.metrics {
		targets = targets || m.target > 0
	}
	head := []string{"metric"}
	for _, c := range lay.columns {
		head = append(head, c.heading)
	}
	for _, r := range lay.ratios {
		head = append(head, r.heading)
	}
	if targets {
		head = append(head, "target met?")
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(head, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---:|", len(head)-1))
	for _, m := range lay.metrics {
		if row, ok := metricRow(lay, m, runs, targets); ok {
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
	var counts []string
	for _, c := range lay.columns {
		counts = append(counts, fmt.Sprintf("%s %d", c.heading, len(runs[c.name])))
	}
	fmt.Fprintf(w, "\nX ÷ Y is X's figure over Y's (Y's over X's for rates): above 1, Y is better. Runs (medians): %s.\n",
		strings.Join(counts, ", "))
}

// metricRow returns m's cells, and false when no side has m.
func metricRow(lay layout, m metricSpec, runs map[string][]runOutput, targets bool) ([]string, bool) {
	row := []string{m.name}
	unit, found := "", false
	for _, c := range lay.columns {
		if _, u, ok := median(runs[c.name], m.name); ok {
			unit, found = u, true
		}
	}
	if !found {
		return nil, false
	}
	for _, c := range lay.columns {
		v, _, ok := median(runs[c.name], m.name)
		row = append(row, cell(v, unit, ok))
	}
	met := ""
	for i, r := range lay.ratios {
		adv, ok := advantage(m, runs[r.theirs], runs[r.ours])
		switch {
		case !ok:
			row = append(row, "—")
		case m.note != "":
			row = append(row, m.note)
		default:
			row = append(row, strconv.FormatFloat(adv, 'f', 2, 64))
			if i == 0 && m.target > 0 {
				met = verdict(adv, m.target)
			}
		}
	}
	if targets {
		row = append(row, met)
	}
	return row, true
}

// advantage returns ours' advantage over theirs on m (above 1 favours
// ours), and false unless both sides have a positive figure.
func advantage(m metricSpec, theirs, ours []runOutput) (float64, bool) {
	t, _, okT := median(theirs, m.name)
	o, _, okO := median(ours, m.name)
	if !okT || !okO || t <= 0 || o <= 0 {
		return 0, false
	}
	if m.higherBetter {
		return o / t, true
	}
	return t / o, true
}

func verdict(adv, target float64) string {
	if adv >= target {
		return fmt.Sprintf("yes (≥ %g×)", target)
	}
	return fmt.Sprintf("**no** (≥ %g× wanted)", target)
}

func cell(v float64, unit string, ok bool) string {
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', digits(v), 64) + " " + unit
}

func digits(v float64) int {
	switch {
	case v >= 1000:
		return 0
	case v >= 10:
		return 1
	}
	return 2
}
