package folder

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// startDir runs a directory source on dir until the test ends and waits
// for its initial load.
func startDir(t *testing.T, dir string, opts ...Option) (*Source, *krt.Graph) {
	t.Helper()
	g := krt.NewGraph()
	s := NewDir(g, dir, append([]Option{WithDebounce(20 * time.Millisecond)}, opts...)...)
	ctx := testrun.Go(t, s.Run)
	if err := krt.WaitSynced(ctx, s.Inputs().Pods, s.Inputs().Services); err != nil {
		t.Fatal(err)
	}
	return s, g
}

// eventually waits for cond, failing the test after a generous timeout;
// the watcher's latency is not what these tests measure.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testrun.Poll(10*time.Second, 5*time.Millisecond, cond) {
		t.Fatalf("timed out waiting for %s (problems: %v)", what, lastProblems)
	}
}

// write writes a file in place, as most editors and tools do: truncate,
// then write. The watcher may load the file in between, empty.
func write(t *testing.T, path string, content ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(content, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace swaps in a file's new content at once, through a hidden file
// renamed over it: the watcher never reads it half written. Tests that
// check what a load keeps use it, since a load of the truncated file
// between write's two steps is a valid load of an empty file (on a busy
// machine the writer can be held up longer than the debounce).
func replace(t *testing.T, path string, content ...string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	write(t, tmp, content...)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func podKeys(s *Source) string {
	return keysOf(s.Inputs().Pods, func(p *sources.PodInfo) string { return p.Namespace + "/" + p.Name })
}

// lastProblems is what hasProblem last saw, for failure messages.
var lastProblems []Problem

func hasProblem(s *Source, substr string) bool {
	lastProblems = s.Problems()
	for _, p := range lastProblems {
		if strings.Contains(p.String(), substr) {
			return true
		}
	}
	return false
}

func TestWatchEdits(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), podYAML("ns", "a1", "x"), podYAML("ns", "a2", "x"))
	write(t, filepath.Join(dir, "b.yaml"), podYAML("ns", "b1", "x"))
	s, g := startDir(t, dir)
	pods := s.Inputs().Pods
	if got := podKeys(s); got != "ns/a1,ns/a2,ns/b1" {
		t.Fatalf("initial pods %s", got)
	}
	b1, _ := pods.Get("ns/b1")

	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"edit a file", func() {
			write(t, filepath.Join(dir, "a.yaml"), podYAML("ns", "a1", "new"), podYAML("ns", "a3", "x"))
		}, "ns/a1,ns/a3,ns/b1"},
		{"new file", func() { write(t, filepath.Join(dir, "c.yaml"), podYAML("ns", "c1", "x")) }, "ns/a1,ns/a3,ns/b1,ns/c1"},
		{"new directory", func() { write(t, filepath.Join(dir, "sub", "deep", "d.yaml"), podYAML("ns", "d1", "x")) }, "ns/a1,ns/a3,ns/b1,ns/c1,ns/d1"},
		{"file in the new directory", func() { write(t, filepath.Join(dir, "sub", "deep", "e.yml"), podYAML("ns", "e1", "x")) }, "ns/a1,ns/a3,ns/b1,ns/c1,ns/d1,ns/e1"},
		{"rename away from a manifest name", func() {
			if err := os.Rename(filepath.Join(dir, "c.yaml"), filepath.Join(dir, "c.yaml.bak")); err != nil {
				t.Fatal(err)
			}
		}, "ns/a1,ns/a3,ns/b1,ns/d1,ns/e1"},
		{"remove a directory", func() {
			if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
		}, "ns/a1,ns/a3,ns/b1"},
		{"move a directory in", func() {
			other := t.TempDir()
			write(t, filepath.Join(other, "f.json"), `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"f1","namespace":"ns"}}`)
			if err := os.Rename(other, filepath.Join(dir, "moved")); err != nil {
				t.Skipf("cannot rename across temp dirs: %v", err)
			}
		}, "ns/a1,ns/a3,ns/b1,ns/f1"},
	}
	for _, step := range steps {
		v := g.Version()
		step.do()
		eventually(t, step.name, func() bool { return podKeys(s) == step.want })
		if got := g.Version(); got <= v {
			t.Errorf("%s: version %d did not move from %d", step.name, got, v)
		}
		// b.yaml never changed: its object is the very same value.
		if got, _ := pods.Get("ns/b1"); got != b1 {
			t.Errorf("%s: b1 was replaced", step.name)
		}
	}
	if a1, _ := pods.Get("ns/a1"); a1.Labels["app"] != "new" {
		t.Errorf("a1 not updated: %v", a1.Labels)
	}
	write(t, filepath.Join(dir, "b.yaml"))
	eventually(t, "emptied file", func() bool { return podKeys(s) == "ns/a1,ns/a3,ns/f1" })
}

func TestWatchAtomicSave(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), serviceYAML("ns", "web", "web", 80))
	s, _ := startDir(t, dir)
	port := func() int32 {
		svc, ok := s.Inputs().Services.Get("ns/web")
		if !ok {
			return 0
		}
		return svc.Spec.Ports[0].Port
	}
	for i, tmp := range []string{".a.yaml.swp", "a.yaml~", "4913"} {
		want := int32(81 + i)
		write(t, filepath.Join(dir, tmp), serviceYAML("ns", "web", "web", int(want)))
		if err := os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, "a.yaml")); err != nil {
			t.Fatal(err)
		}
		eventually(t, "saved port", func() bool { return port() == want })
	}
	if n := s.Inputs().Services.Len(); n != 1 {
		t.Errorf("%d services", n)
	}
}

// TestWatchConfigMapSwap mimics how the kubelet updates a ConfigMap volume:
// the visible files link through "..data", which is swapped atomically to a
// new timestamped directory.
func TestWatchConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	publish := func(version string, content string) {
		ts := filepath.Join(dir, "..2026_"+version)
		write(t, filepath.Join(ts, "mesh.yaml"), content)
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	publish("1", serviceYAML("ns", "web", "web", 80))
	if err := os.Symlink(filepath.Join("..data", "mesh.yaml"), filepath.Join(dir, "mesh.yaml")); err != nil {
		t.Fatal(err)
	}
	s, _ := startDir(t, dir)
	svcs := s.Inputs().Services
	if svc, ok := svcs.Get("ns/web"); !ok || svc.Spec.Ports[0].Port != 80 {
		t.Fatalf("initial service %v", svcs.List())
	}
	publish("2", serviceYAML("ns", "web", "web", 90)+"---\n"+serviceYAML("ns", "api", "api", 91))
	if err := os.RemoveAll(filepath.Join(dir, "..2026_1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "swapped config", func() bool {
		svc, ok := svcs.Get("ns/web")
		return ok && svc.Spec.Ports[0].Port == 90 && svcs.Len() == 2
	})
	if st := s.Stats(); st.Files != 1 {
		t.Errorf("files %d, want 1 (hidden directories are not read)", st.Files)
	}
}

func TestWatchBadFileKeepsLastGood(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	write(t, a, podYAML("ns", "a1", "x"), podYAML("ns", "a2", "x"))
	s, _ := startDir(t, dir)
	pods := s.Inputs().Pods
	a1, _ := pods.Get("ns/a1")
	bad := []struct {
		name, content, problem string
	}{
		{"unparsable", podYAML("ns", "a1", "x") + "---\nkind: Pod\nmetadata: {name: [\n", a + ":12: document 2: invalid YAML: yaml: line 2"},
		{"missing name", podYAML("ns", "a1", "zz") + "---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: ns}\n", a + ":11: document 2: Pod: metadata.name is required"},
		{"bad port", serviceYAML("ns", "web", "web", 0), a + ":1: document 1: Service ns/web: spec.ports[0].port 0"},
		{"unknown field", "apiVersion: v1\nkind: Pod\nmetadata: {name: a1, namespace: ns}\nspec: {containerz: []}\n", `unknown field "spec.containerz"`},
	}
	for _, tc := range bad {
		replace(t, a, tc.content)
		eventually(t, tc.name+" reported as "+tc.problem, func() bool { return hasProblem(s, tc.problem) })
		if got := podKeys(s); got != "ns/a1,ns/a2" {
			t.Errorf("%s: pods %s, want the last good ones", tc.name, got)
		}
		if got, _ := pods.Get("ns/a1"); got != a1 {
			t.Errorf("%s: a1 changed", tc.name)
		}
		if st := s.Stats(); st.FailingFiles != 1 {
			t.Errorf("%s: stats %+v", tc.name, st)
		}
	}
	if st := s.Stats(); st.FileErrors < uint64(len(bad)) {
		t.Errorf("file errors %d", st.FileErrors)
	}
	replace(t, a, podYAML("ns", "a1", "fixed"))
	eventually(t, "fix applied", func() bool { return podKeys(s) == "ns/a1" && len(s.Problems()) == 0 })

	// A broken file that is then deleted takes its last good objects along.
	replace(t, a, "{")
	eventually(t, "broken again", func() bool { return len(s.Problems()) == 1 })
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deleted", func() bool { return podKeys(s) == "" && len(s.Problems()) == 0 })
}

func TestWatchConflict(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.yaml"), serviceYAML("ns", "web", "web", 82))
	write(t, filepath.Join(dir, "a", "x.yaml"), serviceYAML("ns", "web", "web", 81))
	s, _ := startDir(t, dir)
	svcs := s.Inputs().Services
	port := func() int32 { svc, _ := svcs.Get("ns/web"); return svc.Spec.Ports[0].Port }
	if port() != 81 {
		t.Errorf("winner port %d, want 81 from a/x.yaml", port())
	}
	want := filepath.Join(dir, "b.yaml") + ":1: document 1: Service ns/web: conflict: also defined in " + filepath.Join(dir, "a", "x.yaml")
	if p := s.Problems(); len(p) != 1 || !strings.HasPrefix(p[0].String(), want) {
		t.Errorf("problems %v, want %q", p, want)
	}
	if st := s.Stats(); st.Conflicts != 1 || st.Objects != 1 {
		t.Errorf("stats %+v", st)
	}
	// Editing the loser changes nothing visible.
	write(t, filepath.Join(dir, "b.yaml"), serviceYAML("ns", "web", "web", 83))
	eventually(t, "loser edited", func() bool { return hasProblem(s, "conflict") && s.Stats().Loads >= 2 })
	if port() != 81 {
		t.Errorf("port %d after editing the loser", port())
	}
	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "loser takes over", func() bool { return port() == 83 && len(s.Problems()) == 0 })
}

func TestWatchDebounce(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	write(t, a, serviceYAML("ns", "web", "web", 1))
	// The quiet period is long enough that a test goroutine held up on a
	// busy machine does not split the burst more than once.
	s, _ := startDir(t, dir, WithDebounce(time.Second))
	before := s.Stats().Loads
	const writes = 30
	for i := 2; i <= writes; i++ {
		replace(t, a, serviceYAML("ns", "web", "web", i))
	}
	eventually(t, "last write", func() bool {
		svc, ok := s.Inputs().Services.Get("ns/web")
		return ok && svc.Spec.Ports[0].Port == writes
	})
	// The burst is applied in one go (two if it straddled a period).
	if n := s.Stats().Loads - before; n < 1 || n > 2 {
		t.Errorf("%d writes applied in %d loads", writes-1, n)
	}
}

// TestWatchLogsReloadsAndConflicts: a conflict is logged once, when it
// starts, naming the file used and the one ignored; a reload that loads
// is logged with its files, the first load is not.
func TestWatchLogsReloadsAndConflicts(t *testing.T) {
	dir := t.TempDir()
	var log testrun.Buffer
	write(t, filepath.Join(dir, "a.yaml"), serviceYAML("ns", "web", "web", 81))
	write(t, filepath.Join(dir, "b.yaml"), serviceYAML("ns", "web", "web", 82))
	s, _ := startDir(t, dir, WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	lines := func(substr string) int { return strings.Count(log.String(), substr) }
	conflict := fmt.Sprintf("object=\"Service ns/web\" used=%s ignored=[%s]", filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"))
	if lines("level=WARN msg=\"manifest conflict") != 1 || lines(conflict) != 1 {
		t.Errorf("want one conflict warning with %s:\n%s", conflict, log.String())
	}
	if lines("manifests reloaded") != 0 {
		t.Errorf("the first load is logged as a reload:\n%s", log.String())
	}

	// Editing the ignored file is a reload; the conflict goes on, unlogged.
	write(t, filepath.Join(dir, "b.yaml"), serviceYAML("ns", "web", "web", 83))
	eventually(t, "the reload logged", func() bool { return lines("manifests reloaded") == 1 })
	if want := fmt.Sprintf("files=[%s] changed=1", filepath.Join(dir, "b.yaml")); lines(want) != 1 {
		t.Errorf("reload line lacks %q:\n%s", want, log.String())
	}
	if lines("manifest conflict") != 1 {
		t.Errorf("an ongoing conflict logged again:\n%s", log.String())
	}
	if s.Stats().Conflicts != 1 {
		t.Errorf("stats %+v, want one conflict", s.Stats())
	}
}
