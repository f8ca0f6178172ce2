package folder

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshd/meshd/krt"
)

func TestSplitDocuments(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		json      bool
		wantLines []int
		wantFirst []string // first line of each document
	}{
		{name: "single", in: "a: 1\nb: 2\n", wantLines: []int{1}, wantFirst: []string{"a: 1"}},
		{name: "leading separator", in: "---\na: 1\n", wantLines: []int{2}, wantFirst: []string{"a: 1"}},
		{name: "three", in: "a: 1\n---\nb: 2\n--- # c\nc: 3", wantLines: []int{1, 3, 5}, wantFirst: []string{"a: 1", "b: 2", "c: 3"}},
		{name: "empty and comment docs dropped", in: "# header\n---\n\n---\na: 1\n---\n# only a comment\n", wantLines: []int{5}, wantFirst: []string{"a: 1"}},
		{name: "not a separator", in: "a: |\n  ---x\n", wantLines: []int{1}, wantFirst: []string{"a: |"}},
		{name: "crlf", in: "a: 1\r\n---\r\nb: 2\r\n", wantLines: []int{1, 3}, wantFirst: []string{"a: 1", "b: 2"}},
		{name: "json is one document", in: "{\"a\":\n1}\n", json: true, wantLines: []int{1}, wantFirst: []string{"{\"a\":"}},
		{name: "empty", in: "\n\n", wantLines: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs := splitDocuments([]byte(tc.in), tc.json)
			if len(docs) != len(tc.wantLines) {
				t.Fatalf("got %d documents, want %d: %+v", len(docs), len(tc.wantLines), docs)
			}
			for i, d := range docs {
				if d.index != i+1 || d.line != tc.wantLines[i] {
					t.Errorf("doc %d: index %d line %d, want index %d line %d", i, d.index, d.line, i+1, tc.wantLines[i])
				}
				first := strings.TrimRight(strings.SplitN(string(d.data), "\n", 2)[0], "\r")
				if first != tc.wantFirst[i] {
					t.Errorf("doc %d starts with %q, want %q", i, first, tc.wantFirst[i])
				}
			}
		})
	}
}

// testDecoder returns the decoder of a fresh source.
func testDecoder(t *testing.T, opts ...Option) *decoder {
	t.Helper()
	s := NewFS(krt.NewGraph(), nil, opts...)
	return newDecoder(s.scheme, s.kinds, s.unstructuredKind, s.opts.strict, s.opts.defaultNamespace)
}

// decodeFileCase is one file for TestDecodeFileProblems to decode.
type decodeFileCase struct {
	name       string
	path, in   string
	lenient    bool
	wantFailed bool
	wantKeys   []string
	// wantProblem is a substring of the first problem; wantLine and
	// wantDoc its location.
	wantProblem string
	// wantUnknownKind is the first problem's UnknownKind.
	wantUnknownKind   string
	wantLine, wantDoc int
}

// decodeFileCases are the files TestDecodeFileProblems decodes.
var decodeFileCases = []decodeFileCase{
	{
		name:     "service defaults namespace and protocol",
		path:     "a.yaml",
		in:       "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 80}]\n",
		wantKeys: []string{"Service default/web"},
	},
	{
		name:        "missing name",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n",
		wantFailed:  true,
		wantKeys:    []string{"Pod default/ok"},
		wantProblem: "metadata.name is required", wantLine: 5, wantDoc: 2,
	},
	{
		name:        "bad port",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ports: [{port: 70000}]\n",
		wantFailed:  true,
		wantProblem: "spec.ports[0].port 70000", wantLine: 1, wantDoc: 1,
	},
	{
		name:        "unknown field strict",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  portz: []\n",
		wantFailed:  true,
		wantProblem: `unknown field "spec.portz"`, wantLine: 1, wantDoc: 1,
	},
	{
		name:     "unknown field lenient",
		path:     "a.yaml",
		in:       "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  portz: []\n",
		lenient:  true,
		wantKeys: []string{"Service default/web"},
	},
	{
		name:        "invalid yaml reports the file line",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  labels: x: y\n",
		wantFailed:  true,
		wantKeys:    []string{"Pod default/a"},
		wantProblem: "invalid YAML", wantLine: 9, wantDoc: 2,
	},
	{
		name:        "missing kind",
		path:        "a.yaml",
		in:          "apiVersion: v1\nmetadata: {name: a}\n",
		wantFailed:  true,
		wantProblem: "apiVersion and kind are required", wantLine: 1, wantDoc: 1,
	},
	{
		name:        "unknown kind kept as unstructured with a warning",
		path:        "a.yaml",
		in:          "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: ns}\nspec: {size: 3}\n",
		wantKeys:    []string{"Widget.example.com/ns/w"},
		wantProblem: "kind Widget (example.com/v1) has no collection", wantLine: 1, wantDoc: 1,
		wantUnknownKind: "Widget (example.com/v1)",
	},
	{
		name:        "a kind one letter off a registered one: the hint names it",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Servic\nmetadata: {name: web, namespace: ns}\n",
		wantKeys:    []string{"Servic/ns/web"},
		wantProblem: "kind Servic (v1) has no collection; kept as unstructured; did you mean Service?", wantLine: 1, wantDoc: 1,
		wantUnknownKind: "Servic (v1)",
	},
	{
		name:     "list and json",
		path:     "a.json",
		in:       `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n1"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n1"}}]}`,
		wantKeys: []string{"Namespace n1", "ConfigMap n1/c"},
	},
	{
		name:        "namespace on cluster-scoped kind",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Node\nmetadata: {name: node1, namespace: x}\n",
		wantFailed:  true,
		wantProblem: "cluster-scoped Node", wantLine: 1, wantDoc: 1,
	},
	{
		name:        "duplicate within a file",
		path:        "a.yaml",
		in:          "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n",
		wantFailed:  true,
		wantKeys:    []string{"Pod default/a"},
		wantProblem: "defined again; first defined in document 1", wantLine: 5, wantDoc: 2,
	},
	{
		name:        "gateway route backend port",
		path:        "a.yaml",
		in:          "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r}\nspec:\n  rules:\n  - backendRefs: [{name: web, port: 0}]\n",
		wantFailed:  true,
		wantProblem: "spec.rules[0].backendRefs[0].port 0", wantLine: 1, wantDoc: 1,
	},
	{
		name:        "grpc route backend port",
		path:        "a.yaml",
		in:          "apiVersion: gateway.networking.k8s.io/v1\nkind: GRPCRoute\nmetadata: {name: g}\nspec:\n  rules:\n  - backendRefs: [{name: web, port: 9090}]\n  - backendRefs: [{name: web, port: 9090}, {name: api, port: 70000}]\n",
		wantFailed:  true,
		wantProblem: "spec.rules[1].backendRefs[1].port 70000", wantLine: 1, wantDoc: 1,
	},
}

func TestDecodeFileProblems(t *testing.T) {
	for _, tc := range decodeFileCases {
		t.Run(tc.name, func(t *testing.T) { checkDecodeFile(t, tc) })
	}
}

// checkDecodeFile decodes tc's file and checks its objects and first
// problem.
func checkDecodeFile(t *testing.T, tc decodeFileCase) {
	d := testDecoder(t, WithStrict(!tc.lenient))
	p := d.decodeFile(tc.path, []byte(tc.in))
	if p.failed != tc.wantFailed {
		t.Errorf("failed = %v, want %v; problems %v", p.failed, tc.wantFailed, p.problems)
	}
	var keys []string
	for _, e := range p.entries {
		keys = append(keys, describe(e.id))
	}
	if strings.Join(keys, ",") != strings.Join(tc.wantKeys, ",") {
		t.Errorf("objects %q, want %q", keys, tc.wantKeys)
	}
	if tc.wantProblem == "" {
		if len(p.problems) > 0 {
			t.Errorf("unexpected problems %v", p.problems)
		}
		return
	}
	if len(p.problems) == 0 {
		t.Fatalf("no problem, want %q", tc.wantProblem)
	}
	pr := p.problems[0]
	if !strings.Contains(pr.Message, tc.wantProblem) || pr.Line != tc.wantLine || pr.Doc != tc.wantDoc || pr.Path != tc.path ||
		pr.UnknownKind != tc.wantUnknownKind {
		t.Errorf("problem %s (line %d doc %d), want %q at line %d doc %d", pr, pr.Line, pr.Doc, tc.wantProblem, tc.wantLine, tc.wantDoc)
	}
}

func TestDecodeDefaultsAndTypes(t *testing.T) {
	d := testDecoder(t)
	p := d.decodeFile("a.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"))
	if p.failed || len(p.entries) != 2 {
		t.Fatalf("failed=%v entries=%d problems=%v", p.failed, len(p.entries), p.problems)
	}
	svc := p.entries[0].obj.(*corev1.Service)
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[0].TargetPort.IntVal != 80 {
		t.Errorf("defaults not applied: %+v", svc.Spec)
	}
	if svc.ResourceVersion == "" {
		t.Error("ResourceVersion not set from the document hash")
	}
	if u, ok := p.entries[1].obj.(*unstructured.Unstructured); !ok || u.GetName() != "w" {
		t.Errorf("unknown kind decoded as %T", p.entries[1].obj)
	}
	// The same document yields the same ResourceVersion, a changed one another.
	again := d.decodeFile("b.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n"))
	changed := d.decodeFile("b.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {app: web}\n  ports: [{port: 81}]\n"))
	rv := func(p *parsed) string { return p.entries[0].obj.(*corev1.Service).ResourceVersion }
	if rv(again) != svc.ResourceVersion || rv(changed) == svc.ResourceVersion {
		t.Errorf("resource versions: %s, again %s, changed %s", svc.ResourceVersion, rv(again), rv(changed))
	}
}
