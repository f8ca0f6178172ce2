package folder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/sources"
)

// entry is one object decoded from a file.
type entry struct {
	id  objectID
	obj runtime.Object
	doc int // 1-based document number
	// line is the line of the document (of the List, for a List item).
	line int
}

// objectID names an object across collections: its kind (the unstructured
// kind for objects without a collection, whose key then includes the kind)
// and its key.
type objectID struct {
	kind *kind
	key  string
}

// parsed is the result of decoding one file.
type parsed struct {
	sum      uint64
	entries  []entry
	problems []Problem
	// failed is set when a problem is an error: the file's last good
	// objects stay.
	failed bool
}

// decoder turns file contents into objects. It is safe for concurrent use
// once built.
type decoder struct {
	kinds            map[schema.GroupVersionKind]*kind
	unstructured     *kind // the kind of objects without a collection of their own
	codec            runtime.Decoder
	strict           bool
	defaultNamespace string
}

func newDecoder(scheme *runtime.Scheme, kinds map[schema.GroupVersionKind]*kind, unstructured *kind, strict bool, defaultNamespace string) *decoder {
	return &decoder{
		kinds:            kinds,
		unstructured:     unstructured,
		codec:            kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: strict}),
		strict:           strict,
		defaultNamespace: defaultNamespace,
	}
}

var listGVK = schema.GroupVersionKind{Version: "v1", Kind: "List"}

// decodeFile decodes every document of the file at path.
func (d *decoder) decodeFile(path string, data []byte) *parsed {
	p := &parsed{sum: hashBytes(data)}
	isJSON := strings.HasSuffix(path, ".json")
	for _, doc := range splitDocuments(data, isJSON) {
		d.decodeDocument(p, path, doc, isJSON)
	}
	// One object defined twice in a file is an error of the later document:
	// which one the author meant is anyone's guess.
	seen := make(map[objectID]int, len(p.entries))
	kept := p.entries[:0]
	for _, e := range p.entries {
		if first, dup := seen[e.id]; dup {
			p.failed = true
			p.problems = append(p.problems, Problem{
				Path: path, Doc: e.doc, Line: e.line, Severity: SeverityError, Object: describe(e.id),
				Message: fmt.Sprintf("defined again; first defined in document %d", first),
			})
			continue
		}
		seen[e.id] = e.doc
		kept = append(kept, e)
	}
	p.entries = kept
	return p
}

func (d *decoder) decodeDocument(p *parsed, path string, doc document, isJSON bool) {
	fail := func(line int, sev Severity, object, format string, args ...any) {
		p.failed = p.failed || sev == SeverityError
		p.problems = append(p.problems, Problem{
			Path: path, Doc: doc.index, Line: line, Severity: sev, Object: object,
			Message: fmt.Sprintf(format, args...),
		})
	}
	js := doc.data
	if !isJSON {
		var err error
		if js, err = yaml.YAMLToJSON(doc.data); err != nil {
			fail(yamlErrorLine(err, doc), SeverityError, "", "invalid YAML: %v", err)
			return
		}
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(js, &tm); err != nil {
		fail(doc.line, SeverityError, "", "not a Kubernetes object: %v", err)
		return
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		fail(doc.line, SeverityError, "", "apiVersion and kind are required")
		return
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	if gvk != listGVK {
		d.decodeObject(p, path, doc, gvk, js, fail)
		return
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		fail(doc.line, SeverityError, "", "invalid List: %v", err)
		return
	}
	for i, item := range list.Items {
		var itm metav1.TypeMeta
		if err := json.Unmarshal(item, &itm); err != nil || itm.APIVersion == "" || itm.Kind == "" {
			fail(doc.line, SeverityError, "", "List item %d: apiVersion and kind are required", i)
			continue
		}
		d.decodeObject(p, path, doc, schema.FromAPIVersionAndKind(itm.APIVersion, itm.Kind), item, fail)
	}
}

// decodeObject decodes js, an object of gvk from document doc, into p,
// reporting what is wrong with it through fail.
func (d *decoder) decodeObject(p *parsed, path string, doc document, gvk schema.GroupVersionKind, js []byte,
	fail func(line int, sev Severity, object, format string, args ...any)) {
	k := d.kinds[gvk]
	obj, meta, object, err := d.decodeAs(k, gvk, js)
	if err != nil {
		fail(doc.line, SeverityError, object, "%v", err)
		return
	}
	label := gvk.Kind
	if meta.GetName() != "" {
		label += " " + sources.Key(meta)
	}
	if err := d.checkMeta(k, meta); err != nil {
		fail(doc.line, SeverityError, label, "%v", err)
		return
	}
	label = gvk.Kind + " " + sources.Key(meta)
	if k != nil {
		if err := d.validate(k, obj, js); err != nil {
			fail(doc.line, SeverityError, label, "%v", err)
			return
		}
	}
	meta.SetResourceVersion(strconv.FormatUint(hashBytes(js), 36))
	id := objectID{kind: k, key: sources.Key(meta)}
	if k != nil && k.convert != nil {
		obj = k.convert(obj) // after the version is set: the stored object carries it
	}
	if k == nil {
		id = objectID{kind: d.unstructured, key: unstructuredKey(gvk.GroupKind(), meta)}
		fail(doc.line, SeverityWarning, label, "%s", unknownKindMessage(gvk, d.kindNames()))
		p.problems[len(p.problems)-1].UnknownKind = kindName(gvk)
	}
	p.entries = append(p.entries, entry{id: id, obj: obj, doc: doc.index, line: doc.line})
}

// kindNames returns the kinds that have a collection, sorted.
func (d *decoder) kindNames() []string {
	var out []string
	for gvk := range d.kinds {
		out = append(out, gvk.Kind)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// decodeAs decodes js as an object of gvk: into its Go type when k, its
// kind, has a collection (k not nil), else as unstructured. On failure it
// returns, besides the error, the object's name for the report ("" when
// unknown).
func (d *decoder) decodeAs(k *kind, gvk schema.GroupVersionKind, js []byte) (runtime.Object, metav1.Object, string, error) {
	if k == nil {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, nil, "", fmt.Errorf("%s: %w", gvk.Kind, err)
		}
		return u, u, "", nil
	}
	o, _, err := d.codec.Decode(js, &gvk, nil)
	// Outside strict mode an unknown field is no error: the object stands.
	if err != nil && !(runtime.IsStrictDecodingError(err) && o != nil && !d.strict) {
		return nil, nil, gvk.Kind + " " + objectName(js), err
	}
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, nil, "", fmt.Errorf("%s has no object metadata", gvk)
	}
	return o, m, "", nil
}

// validate fills in the defaults of obj, of kind k decoded from js, and
// checks it: in strict mode its spec against its proto, then the rules of
// built-in kinds and k's own.
func (d *decoder) validate(k *kind, obj runtime.Object, js []byte) error {
	setDefaults(obj)
	if d.strict {
		if err := checkProtoSpec(obj, js); err != nil {
			return err
		}
	}
	if err := validateBuiltin(obj); err != nil {
		return err
	}
	if k.validate != nil {
		return k.validate(obj)
	}
	return nil
}

// checkMeta validates the name and namespace and fills in the default
// namespace of namespaced kinds. k is nil for an unstructured object, whose
// scope is unknown.
func (d *decoder) checkMeta(k *kind, meta metav1.Object) error {
	name := meta.GetName()
	if name == "" {
		return errors.New("metadata.name is required")
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("metadata.name %q: %s", name, strings.Join(errs, "; "))
	}
	if k == nil {
		return nil
	}
	ns := meta.GetNamespace()
	switch {
	case !k.namespaced && ns != "":
		return fmt.Errorf("metadata.namespace %q set on cluster-scoped %s", ns, k.gvk.Kind)
	case k.namespaced && ns == "":
		meta.SetNamespace(d.defaultNamespace)
	case k.namespaced:
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("metadata.namespace %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	return nil
}

// unstructuredKey is the key of an object in Source.Unstructured, which
// holds many kinds: "Kind.group/namespace/name".
func unstructuredKey(gk schema.GroupKind, meta metav1.Object) string {
	return gk.String() + "/" + sources.Key(meta)
}

// describe names an object for a problem report.
func describe(id objectID) string {
	if id.kind.gvk.Kind == "" {
		return id.key
	}
	return id.kind.gvk.Kind + " " + id.key
}

// objectName extracts namespace/name from a document that failed to
// decode, for the report; it returns "" when there is none.
func objectName(js []byte) string {
	var m struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if json.Unmarshal(js, &m) != nil || m.Metadata.Name == "" {
		return ""
	}
	if m.Metadata.Namespace == "" {
		return m.Metadata.Name
	}
	return m.Metadata.Namespace + "/" + m.Metadata.Name
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine maps the document-relative line in a YAML error to a line
// of the file, or returns the document's first line. The parser may blame
// the line after the last one (an error found at end of input), so the
// result is clamped to the document's last line.
func yamlErrorLine(err error, doc document) int {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return doc.line
	}
	n, _ := strconv.Atoi(m[1])
	lines := bytes.Count(bytes.TrimRight(doc.data, "\n"), []byte("\n")) + 1
	return doc.line + max(min(n, lines), 1) - 1
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}
