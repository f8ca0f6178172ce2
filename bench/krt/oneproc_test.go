package main

import (
	"flag"
	"slices"
	"testing"
)

func TestChildArgs(t *testing.T) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.Int("n", 1000, "")
	fs.Int("m", 10000, "")
	fs.String("cpuprofile", "", "")
	fs.String("profile-phase", "all", "")
	fs.Bool(childFlag, false, "")
	if err := fs.Parse([]string{"-m", "50", "-cpuprofile", "cpu.out", "-profile-phase", "build"}); err != nil {
		t.Fatal(err)
	}
	got := childArgs(fs)
	want := []string{"-m=50", "-" + childFlag}
	if !slices.Equal(got, want) {
		t.Fatalf("childArgs = %q, want %q: the flags set, without the profiles, then the child's", got, want)
	}
}

func TestParseFigures(t *testing.T) {
	figs, err := parseFigures([]byte("param_pods 40 count\ninitial_build 12.500 ms\nresult PASS status\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f := figs["initial_build"]; f != (figure{"12.500", "ms"}) {
		t.Fatalf("initial_build = %+v, want 12.500 ms", f)
	}
	for _, out := range []string{
		"initial_build 12.500 ms\n",                     // no result line
		"initial_build 12.500 ms\nresult FAIL status\n", // failed
		"initial_build 12.500\nresult PASS status\n",    // no unit
	} {
		if _, err := parseFigures([]byte(out)); err == nil {
			t.Errorf("parseFigures(%q) accepted it", out)
		}
	}
}
