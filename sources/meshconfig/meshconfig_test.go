package meshconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	withDefaults := func(f func(*MeshConfig)) MeshConfig {
		c := Default()
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		in      string
		want    MeshConfig
		wantErr string
	}{
		{name: "empty is default", in: "\n", want: Default()},
		{name: "partial keeps defaults", in: "trustDomain: example.org\npushDebounce: 250ms\n",
			want: withDefaults(func(c *MeshConfig) { c.TrustDomain = "example.org"; c.PushDebounce = Duration(250 * time.Millisecond) })},
		{name: "json", in: `{"outboundTrafficPolicy": "REGISTRY_ONLY", "defaultLocality": "eu/west/a"}`,
			want: withDefaults(func(c *MeshConfig) { c.OutboundTrafficPolicy = RegistryOnly; c.DefaultLocality = "eu/west/a" })},
		{name: "unknown field", in: "trustDomian: x\n", wantErr: `unknown field "trustDomian"`},
		{name: "bad duration", in: "connectTimeout: 10 parsecs\n", wantErr: "duration"},
		{name: "invalid value", in: "outboundTrafficPolicy: SOMETIMES\n", wantErr: `outboundTrafficPolicy "SOMETIMES"`},
		{name: "debounce above max", in: "pushDebounce: 20s\n", wantErr: "exceeds pushDebounceMax"},
		{name: "not a mapping", in: "- a\n", wantErr: "decoding mesh config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testrun.Poll(10*time.Second, 5*time.Millisecond, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func value(t *testing.T, c krt.Singleton[MeshConfig]) MeshConfig {
	t.Helper()
	v, ok := c.Value()
	if !ok {
		t.Fatal("no mesh config")
	}
	return v
}

// runFile runs f until the test ends, and waits for its first load.
func runFile(t *testing.T, f *File) {
	t.Helper()
	ctx := testrun.Go(t, f.Run)
	if !f.Config().WaitUntilSynced(ctx.Done()) {
		t.Fatal("not synced")
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mesh.yaml")
	write := func(s string) {
		t.Helper()
		tmp := filepath.Join(dir, ".mesh.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil { // an atomic save
			t.Fatal(err)
		}
	}
	write("trustDomain: one.example\n")

	g := krt.NewGraph()
	f := NewFile(g, path, WithDebounce(10*time.Millisecond))
	if f.Config().HasSynced() {
		t.Fatal("synced before loading")
	}
	runFile(t, f)
	if got := value(t, f.Config()).TrustDomain; got != "one.example" {
		t.Fatalf("trust domain %q", got)
	}

	write("trustDomain: two.example\n")
	eventually(t, "edit", func() bool { return value(t, f.Config()).TrustDomain == "two.example" })

	write("trustDomain: three.example\nbogus: 1\n")
	eventually(t, "rejection", func() bool { return !f.Status().Valid })
	st := f.Status()
	if got := value(t, f.Config()).TrustDomain; got != "two.example" {
		t.Errorf("trust domain %q after a bad edit, want the last good", got)
	}
	if !strings.Contains(st.Error, `unknown field "bogus"`) || st.Rejections != 1 || st.Loads != 2 || st.Source != path {
		t.Errorf("status %+v", st)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, "missing file reported", func() bool { return f.Status().Rejections == 2 })
	if got := value(t, f.Config()).TrustDomain; got != "two.example" {
		t.Errorf("trust domain %q after removal, want the last good", got)
	}
	write("trustDomain: four.example\n")
	eventually(t, "recovery", func() bool { return f.Status().Valid && value(t, f.Config()).TrustDomain == "four.example" })
}

// TestFileTrickle: a file rewritten more often than the debounce period is
// still reloaded while the writes go on, within the maximum delay (ten
// periods) of the first.
func TestFileTrickle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mesh.yaml")
	if err := os.WriteFile(path, []byte("trustDomain: start.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := krt.NewGraph()
	f := NewFile(g, path, WithDebounce(100*time.Millisecond))
	runFile(t, f)

	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // a write every 20ms, well inside the quiet period
		defer close(stopped)
		for i := 0; ; i++ {
			if err := os.WriteFile(path, fmt.Appendf(nil, "trustDomain: trickle%d.example\n", i), 0o644); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	eventually(t, "a reload during the writes", func() bool {
		return strings.HasPrefix(value(t, f.Config()).TrustDomain, "trickle")
	})
	took := time.Since(start)
	close(stop)
	<-stopped
	if took > 5*time.Second {
		t.Errorf("first reload after %s of writes, want about the 1s maximum delay", took)
	}
}

func TestFileConfigMapVolume(t *testing.T) {
	dir := t.TempDir()
	publish := func(version, content string) {
		t.Helper()
		ts := filepath.Join(dir, "..v"+version)
		if err := os.MkdirAll(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, "mesh"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	publish("1", "domainSuffix: one.local\n")
	if err := os.Symlink("..data/mesh", filepath.Join(dir, "mesh")); err != nil {
		t.Fatal(err)
	}
	g := krt.NewGraph()
	f := NewFile(g, filepath.Join(dir, "mesh"), WithDebounce(10*time.Millisecond))
	runFile(t, f)
	if got := value(t, f.Config()).DomainSuffix; got != "one.local" {
		t.Fatalf("domain suffix %q", got)
	}
	publish("2", "domainSuffix: two.local\n")
	eventually(t, "swap", func() bool { return value(t, f.Config()).DomainSuffix == "two.local" })
}

func TestFileInvalidAtStartUsesDefault(t *testing.T) {
	g := krt.NewGraph()
	f := NewFile(g, filepath.Join(t.TempDir(), "absent.yaml"))
	if err := f.Load(); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Errorf("Load error %v", err)
	}
	if !f.Config().HasSynced() || value(t, f.Config()) != Default() || f.Status().Valid {
		t.Errorf("config %+v status %+v", f.Config().List(), f.Status())
	}
}

func TestConfigMap(t *testing.T) {
	g := krt.NewGraph()
	// Keyed as the sources key them; this package cannot import sources,
	// which imports it.
	cms := krt.NewStatic[*corev1.ConfigMap](g, krt.WithName("configmaps"), krt.WithUnsynced(),
		krt.WithKey(func(cm *corev1.ConfigMap) string { return cm.Namespace + "/" + cm.Name }))
	c := FromConfigMap(g, cms, "meshd", "mesh")
	if c.Config().HasSynced() {
		t.Error("synced before the ConfigMaps")
	}
	cms.MarkSynced()
	cm := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "meshd", Name: "mesh"}, Data: data}
	}
	steps := []struct {
		name       string
		do         func()
		wantDomain string
		wantValid  bool
		wantErr    string
	}{
		{"no configmap: defaults", func() {}, "cluster.local", true, ""},
		{"invalid before any good config: defaults", func() { cms.Set(cm(map[string]string{"mesh": "trustDomain: ''"})) }, "cluster.local", false, "trustDomain"},
		{"valid", func() { cms.Set(cm(map[string]string{"mesh": "trustDomain: a.example"})) }, "a.example", true, ""},
		{"invalid keeps last good", func() { cms.Set(cm(map[string]string{"mesh": "trustDomain: b.example\nextra: 1"})) }, "a.example", false, `unknown field "extra"`},
		{"missing key keeps last good", func() { cms.Set(cm(map[string]string{"other": "x"})) }, "a.example", false, `no key "mesh"`},
		{"another configmap changes nothing", func() {
			cms.Set(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "meshd", Name: "other"}})
		}, "a.example", false, `no key "mesh"`},
		{"fixed", func() { cms.Set(cm(map[string]string{"mesh": "trustDomain: c.example"})) }, "c.example", true, ""},
		{"deleted: defaults", func() { cms.Delete("meshd/mesh") }, "cluster.local", true, ""},
	}
	for _, s := range steps {
		s.do()
		st := c.Status()
		if got := value(t, c.Config()).TrustDomain; got != s.wantDomain {
			t.Errorf("%s: trust domain %q, want %q", s.name, got, s.wantDomain)
		}
		if st.Valid != s.wantValid || !strings.Contains(st.Error, s.wantErr) {
			t.Errorf("%s: status %+v", s.name, st)
		}
	}
	if st := c.Status(); st.Rejections != 3 || st.Source != "configmap meshd/mesh" {
		t.Errorf("status %+v", st)
	}
}
