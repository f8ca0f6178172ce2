package folder

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meshd/meshd/krt"
)

// fuzzSeeds are well-formed, broken and adversarial manifests; the
// checked-in corpus under testdata/fuzz holds more.
var fuzzSeeds = []string{
	podYAML("shop", "web-1", "web"),
	serviceYAML("shop", "web", "web", 80) + "---\n" + podYAML("shop", "web-1", "web"),
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- {kind: Pod}\n",
	"apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n",
	"apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports: [{port: 70000, protocol: XTP}]\n",
	"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
	"a: &a [*a]\n",
	"--- \n---\n# c\n---\nnull\n",
	`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}`,
	"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  rules: [{backendRefs: [{name: web, port: 0}]}]\n",
}

// newFuzzDecoder returns the decoder of a fresh source, built once per
// fuzz target: building a scheme costs far more than decoding a document.
func newFuzzDecoder(strict bool) *decoder {
	s := NewFS(krt.NewGraph(), nil, WithStrict(strict))
	return newDecoder(s.scheme, s.kinds, s.unstructuredKind, s.opts.strict, s.opts.defaultNamespace)
}

// FuzzDecodeFile feeds arbitrary bytes to the manifest decoder and
// validator, as a YAML and as a JSON file. It must not panic, and every
// problem must name the file and a document the file has, so that a reader
// can find it.
func FuzzDecodeFile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false, true)
	}
	decs := map[bool]*decoder{true: newFuzzDecoder(true), false: newFuzzDecoder(false)}
	f.Fuzz(func(t *testing.T, data []byte, isJSON, strict bool) {
		path := "dir/m.yaml"
		if isJSON {
			path = "dir/m.json"
		}
		docs := len(splitDocuments(data, isJSON))
		lines := strings.Count(string(data), "\n") + 1
		p := decs[strict].decodeFile(path, data)
		failed := false
		for _, pr := range p.problems {
			if pr.Path != path {
				t.Errorf("problem %q names path %q, want %q", pr, pr.Path, path)
			}
			if pr.Doc < 1 || pr.Doc > docs {
				t.Errorf("problem %q names document %d of %d", pr, pr.Doc, docs)
			}
			if pr.Line < 0 || pr.Line > lines {
				t.Errorf("problem %q names line %d of %d", pr, pr.Line, lines)
			}
			if pr.Message == "" {
				t.Errorf("problem without message: %+v", pr)
			}
			if s := pr.String(); !strings.Contains(s, path) || !strings.Contains(s, fmt.Sprintf("document %d", pr.Doc)) {
				t.Errorf("problem string %q names neither file nor document", s)
			}
			failed = failed || pr.Severity == SeverityError
		}
		if failed != p.failed {
			t.Errorf("failed=%v, but error problems=%v: %v", p.failed, failed, p.problems)
		}
		seen := map[objectID]bool{}
		for _, e := range p.entries {
			if e.obj == nil || e.id.kind == nil || e.id.key == "" {
				t.Errorf("entry without object, kind or key: %+v", e)
			}
			if e.doc < 1 || e.doc > docs {
				t.Errorf("entry %s from document %d of %d", describe(e.id), e.doc, docs)
			}
			if seen[e.id] {
				t.Errorf("entry %s kept twice", describe(e.id))
			}
			seen[e.id] = true
		}
	})
}

// FuzzLoadFS loads a fuzzed file next to a good one: whatever the fuzzed
// file holds, the good file's objects load, the source never panics, and
// every problem is about the fuzzed file.
func FuzzLoadFS(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	good := serviceYAML("keep", "svc", "app", 80) + "---\n" + podYAML("keep", "pod", "app")
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewFS(krt.NewGraph(), fstest.MapFS{
			"a/fuzz.yaml": {Data: data},
			"z/good.yaml": {Data: []byte(good)},
		})
		if err := s.Load(); err != nil {
			t.Fatalf("Load: %v", err)
		}
		in := s.Inputs()
		// The fuzzed file may define the same objects: the path sorting
		// first wins, so only check that the good ones exist.
		if _, ok := in.Services.Get("keep/svc"); !ok {
			t.Errorf("good service lost; problems %v", s.Problems())
		}
		if _, ok := in.Pods.Get("keep/pod"); !ok {
			t.Errorf("good pod lost; problems %v", s.Problems())
		}
		for _, pr := range s.Problems() {
			if pr.Path != "a/fuzz.yaml" && !(pr.Path == "z/good.yaml" && strings.Contains(pr.Message, "a/fuzz.yaml")) {
				t.Errorf("problem not about the fuzzed file: %s", pr)
			}
		}
		st := s.Stats()
		if st.Files != 2 || st.FailingFiles > 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestProblemLineWithinFile checks that a YAML error names a line the file
// has. FuzzDecodeFile found that it did not: for "0: \n0" (two lines) the
// YAML parser reports its error on line 3, which yamlErrorLine now clamps
// to the document's last line.
func TestProblemLineWithinFile(t *testing.T) {
	tests := []struct {
		name, in string
		lines    int
	}{
		{name: "missing colon at end", in: "0: \n0", lines: 2},
		{name: "missing colon at end, second document", in: "a: 1\n---\n0: \n0", lines: 4},
	}
	d := newFuzzDecoder(true)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := d.decodeFile("m.yaml", []byte(tc.in))
			if len(p.problems) == 0 {
				t.Fatal("no problem reported")
			}
			for _, pr := range p.problems {
				if pr.Line < 1 || pr.Line > tc.lines {
					t.Errorf("problem %q names line %d of a %d-line file", pr, pr.Line, tc.lines)
				}
			}
		})
	}
}
