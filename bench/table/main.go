package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// runFlags collects -run name=files.
type runFlags map[string]string

func (r runFlags) String() string { return fmt.Sprint(map[string]string(r)) }

func (r runFlags) Set(v string) error {
	name, files, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=file,file,... (got %q)", v)
	}
	r[name] = files
	return nil
}

func main() {
	layoutName := flag.String("layout", "krt", "the comparison: krt or xds, or krt-ab or xds-ab (a base revision against this tree)")
	runs := runFlags{}
	flag.Var(runs, "run", "a side's runs as name=file,file,... (repeatable); krt names: meshd, istio, floor; xds names: sotw, delta, gcp; krt-ab: base, current; xds-ab: base-sotw, sotw, base-delta, delta")
	flag.Parse()
	lay, ok := layouts[*layoutName]
	if !ok {
		fatalf("-layout %q: want krt, xds, krt-ab or xds-ab", *layoutName)
	}
	loaded := map[string][]runOutput{}
	for name, files := range runs {
		if !slices.ContainsFunc(lay.columns, func(c column) bool { return c.name == name }) {
			fatalf("-run %s: layout %s has no such side", name, *layoutName)
		}
		r, err := loadRuns(files, lay.needPass)
		if err != nil {
			fatalf("-run %s: %v", name, err)
		}
		loaded[name] = r
	}
	writeTable(os.Stdout, lay, loaded)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "table: "+format+"\n", args...)
	os.Exit(2)
}
