package debugui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The UI declares the JSON it reads in ui/fields.js (its format is
// described there). These tests hold it to the Go side: to the structs the
// handler encodes, by reflection, and to the answers the handler gives.

// jsField is one field a fields.js type declares.
type jsField struct {
	name      string
	typ       string // "string", "[]Link", ...
	omitempty bool
}

// jsType is one type of fields.js.
type jsType struct {
	name   string
	all    bool // the UI uses every field of the Go struct
	fields []jsField
	line   int
}

// fieldsFile is fields.js parsed.
type fieldsFile struct {
	types  map[string]*jsType
	routes map[string]string // route -> type
	events map[string]string // stream event -> type
}

var (
	jsTypeLine  = regexp.MustCompile(`^  (\w+): \{( // all)?$`)
	jsFieldLine = regexp.MustCompile(`^    (\w+): '((?:\[\])?\w+)(,omitempty)?',$`)
	jsEntryLine = regexp.MustCompile(`^  (?:'([\w/{}]+)'|(\w+)): '(\w+)',$`)
)

// parseFields reads fields.js: three exported objects, types, routes and
// events, one entry a line. Comments and blank lines are skipped; any
// other line is an error naming its number.
func parseFields(src string) (*fieldsFile, error) {
	f := &fieldsFile{types: map[string]*jsType{}, routes: map[string]string{}, events: map[string]string{}}
	var section map[string]string // routes or events, while in one
	var cur *jsType               // the type being read
	inTypes := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		var err error
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "//"):
		case line == "export const types = {":
			inTypes = true
		case line == "export const routes = {":
			section = f.routes
		case line == "export const events = {":
			section = f.events
		case line == "};":
			if cur != nil {
				err = fmt.Errorf("type %s is not closed", cur.name)
			}
			inTypes, section = false, nil
		case inTypes:
			cur, err = f.typeLine(line, n, cur)
		case section != nil:
			m := jsEntryLine.FindStringSubmatch(line)
			if m == nil {
				err = fmt.Errorf("not an entry %q", line)
				break
			}
			section[m[1]+m[2]] = m[3]
		default:
			err = fmt.Errorf("outside types, routes and events: %q", line)
		}
		if err != nil {
			return nil, fmt.Errorf("fields.js:%d: %w", n, err)
		}
	}
	return f, sc.Err()
}

// typeLine reads one line inside types: the start of a type, one of its
// fields, or its end. It returns the type being read after the line.
func (f *fieldsFile) typeLine(line string, n int, cur *jsType) (*jsType, error) {
	if line == "  }," {
		if cur == nil {
			return nil, fmt.Errorf("closes no type")
		}
		return nil, nil
	}
	if m := jsTypeLine.FindStringSubmatch(line); m != nil {
		if cur != nil {
			return nil, fmt.Errorf("type %s opens inside %s", m[1], cur.name)
		}
		if f.types[m[1]] != nil {
			return nil, fmt.Errorf("type %s declared twice", m[1])
		}
		t := &jsType{name: m[1], all: m[2] != "", line: n}
		f.types[t.name] = t
		return t, nil
	}
	m := jsFieldLine.FindStringSubmatch(line)
	if m == nil || cur == nil {
		return cur, fmt.Errorf("not a field of a type: %q", line)
	}
	cur.fields = append(cur.fields, jsField{name: m[1], typ: m[2], omitempty: m[3] != ""})
	return cur, nil
}

func readFields(t *testing.T) *fieldsFile {
	t.Helper()
	src, err := fs.ReadFile(uiFS(), "fields.js")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseFields(string(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseFieldsRejects(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"field outside a type", "export const types = {\n    id: 'number',\n};", "fields.js:2: not a field"},
		{"unquoted type", "export const types = {\n  A: {\n    id: number,\n  },\n};", "fields.js:3: not a field"},
		{"unclosed type", "export const types = {\n  A: {\n    id: 'number',\n};", "fields.js:4: type A is not closed"},
		{"twice", "export const types = {\n  A: {\n  },\n  A: {\n  },\n};", "fields.js:4: type A declared twice"},
		{"stray line", "const x = 1;", "fields.js:1: outside"},
		{"bad route", "export const routes = {\n  api/graph: 'A',\n};", "fields.js:2: not an entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFields(tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// goField is one field encoding/json writes for a struct.
type goField struct {
	name      string
	typ       reflect.Type
	omitempty bool // omitempty or omitzero: the field may be left out
}

// jsonFields returns the fields encoding/json writes for struct type t,
// those of untagged embedded structs included (outer names win).
func jsonFields(t reflect.Type) map[string]goField {
	out := map[string]goField{}
	var embedded []reflect.Type
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			embedded = append(embedded, f.Type)
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out[name] = goField{name: name, typ: f.Type, omitempty: omit}
	}
	for _, e := range embedded {
		for name, f := range jsonFields(e) {
			if _, ok := out[name]; !ok {
				out[name] = f
			}
		}
	}
	return out
}

// jsRoots are the Go types of the answers fields.js names at the top:
// the types of the API answers and of the error body.
var jsRoots = map[string]reflect.Type{
	"GraphSummary":     reflect.TypeFor[GraphSummary](),
	"CollectionDetail": reflect.TypeFor[CollectionDetail](),
	"ItemsPage":        reflect.TypeFor[ItemsPage](),
	"ExplainResult":    reflect.TypeFor[ExplainResult](),
	"ProxiesResult":    reflect.TypeFor[ProxiesResult](),
	"ProblemsResult":   reflect.TypeFor[ProblemsResult](),
	"ReplicaResult":    reflect.TypeFor[ReplicaResult](),
	"ClustersResult":   reflect.TypeFor[ClustersResult](),
	"ErrorBody":        reflect.TypeFor[errorBody](),
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// goMatcher binds the types of fields.js to Go types, from the roots down
// the fields, and reports every mismatch.
type goMatcher struct {
	js    *fieldsFile
	bound map[string]reflect.Type // fields.js type -> Go struct type
	errs  []string
}

func (m *goMatcher) errorf(format string, args ...any) {
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

// bind matches the fields.js type name against Go struct type gt.
func (m *goMatcher) bind(name string, gt reflect.Type) {
	if prev, ok := m.bound[name]; ok {
		if prev != gt {
			m.errorf("fields.js type %s stands for both %v and %v", name, prev, gt)
		}
		return
	}
	m.bound[name] = gt
	jt := m.js.types[name]
	if jt == nil {
		m.errorf("fields.js has no type %s (for %v)", name, gt)
		return
	}
	goFields := jsonFields(gt)
	for _, f := range jt.fields {
		g, ok := goFields[f.name]
		if !ok {
			m.errorf("%s.%s (fields.js:%d): %v sends no field %q", name, f.name, jt.line, gt, f.name)
			continue
		}
		if f.omitempty != g.omitempty {
			m.errorf("%s.%s: fields.js says omitempty=%v, the Go tag %v", name, f.name, f.omitempty, g.omitempty)
		}
		m.matchType(name+"."+f.name, f.typ, g.typ)
	}
	if jt.all {
		declared := map[string]bool{}
		for _, f := range jt.fields {
			declared[f.name] = true
		}
		for _, gname := range slices.Sorted(maps.Keys(goFields)) {
			if !declared[gname] {
				m.errorf("%s (fields.js:%d) says the UI uses all of %v, but does not declare %q", name, jt.line, gt, gname)
			}
		}
	}
}

// matchType checks that the fields.js type jt can hold the JSON of Go type gt.
func (m *goMatcher) matchType(where, jt string, gt reflect.Type) {
	if gt.Kind() == reflect.Pointer {
		gt = gt.Elem()
	}
	ok := true
	switch {
	case jt == "any":
	case strings.HasPrefix(jt, "[]"):
		if gt.Kind() != reflect.Slice || gt == rawType {
			ok = false
			break
		}
		m.matchType(where+"[]", jt[2:], gt.Elem())
	case jt == "string":
		ok = gt.Kind() == reflect.String
	case jt == "number":
		ok = gt.Kind() >= reflect.Int && gt.Kind() <= reflect.Float64
	case jt == "bool":
		ok = gt.Kind() == reflect.Bool
	case jt == "time":
		ok = gt == timeType
	case jt == "map":
		ok = gt.Kind() == reflect.Map && gt.Key().Kind() == reflect.String && gt.Elem().Kind() == reflect.String
	default:
		if ok = gt.Kind() == reflect.Struct && gt != timeType; ok {
			m.bind(jt, gt)
		}
	}
	if !ok {
		m.errorf("%s: fields.js says %s, Go has %v", where, jt, gt)
	}
}

// TestFieldsMatchGo checks fields.js against the Go structs: every field
// it declares is one the struct sends, of a matching type, left out by Go
// only where fields.js says omitempty; a type marked "all" declares every
// field of its struct; and no type of fields.js stands for no struct.
func TestFieldsMatchGo(t *testing.T) {
	js := readFields(t)
	m := &goMatcher{js: js, bound: map[string]reflect.Type{}}
	for _, name := range slices.Sorted(maps.Keys(jsRoots)) {
		if js.types[name] == nil {
			t.Errorf("fields.js lacks the answer type %s", name)
			continue
		}
		m.bind(name, jsRoots[name])
	}
	for _, e := range m.errs {
		t.Error(e)
	}
	for _, name := range slices.Sorted(maps.Keys(js.types)) {
		if _, ok := m.bound[name]; !ok {
			t.Errorf("fields.js type %s is no answer's, nor in one", name)
		}
	}
	for what, typ := range mergedAnswers(js) {
		if _, ok := js.types[typ]; !ok && typ != "any" {
			t.Errorf("%s answers %s, which fields.js does not declare", what, typ)
		}
	}
	t.Logf("%d types of fields.js bound to Go structs", len(m.bound))
}

func mergedAnswers(js *fieldsFile) map[string]string {
	out := map[string]string{}
	for r, typ := range js.routes {
		out["route "+r] = typ
	}
	for e, typ := range js.events {
		out["event "+e] = typ
	}
	return out
}

// jsKinds are the JSON kinds of the fields.js scalar types, as
// encoding/json decodes them into an any.
var jsKinds = map[string]func(any) bool{
	"string": func(v any) bool { _, ok := v.(string); return ok },
	"time": func(v any) bool {
		s, ok := v.(string)
		_, err := time.Parse(time.RFC3339Nano, s)
		return ok && err == nil
	},
	"number": func(v any) bool { _, ok := v.(float64); return ok },
	"bool":   func(v any) bool { _, ok := v.(bool); return ok },
	"map": func(v any) bool {
		m, ok := v.(map[string]any)
		for _, x := range m {
			if _, isStr := x.(string); !isStr {
				return false
			}
		}
		return ok
	},
}

// conforms reports where v, decoded JSON, is not of the fields.js type
// typ: a declared field missing that is not omitempty, or of another kind.
// It checks what the UI's decoder (api.js) checks, which takes null for an
// empty list or an absent object, so that what it reports is what the page
// would report on its console.
func (f *fieldsFile) conforms(typ string, v any, where string) []string {
	_, scalar := jsKinds[typ]
	if typ == "any" || (v == nil && !scalar) {
		return nil
	}
	if elem, ok := strings.CutPrefix(typ, "[]"); ok {
		list, ok := v.([]any)
		if !ok {
			return []string{where + ": not a list"}
		}
		var errs []string
		for i, x := range list {
			errs = append(errs, f.conforms(elem, x, fmt.Sprintf("%s[%d]", where, i))...)
		}
		return errs
	}
	if isKind, ok := jsKinds[typ]; ok {
		if !isKind(v) {
			return []string{fmt.Sprintf("%s: %v is not a %s", where, v, typ)}
		}
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: %v is not a %s", where, v, typ)}
	}
	var errs []string
	for _, fd := range f.types[typ].fields {
		x, present := obj[fd.name]
		switch {
		case !present && !fd.omitempty:
			errs = append(errs, fmt.Sprintf("%s: no field %s", where, fd.name))
		case present:
			errs = append(errs, f.conforms(fd.typ, x, where+"."+fd.name)...)
		}
	}
	return errs
}

// TestFieldsMatchAnswers checks fields.js against what the handler sends:
// the answer of every route fields.js names, an error, and the first event
// of each kind on the stream conform to the types fields.js gives them.
func TestFieldsMatchAnswers(t *testing.T) {
	js := readFields(t)
	now := time.Now()
	proxies := newFakeProxies(now)
	rep := newFakeReplica(Replica{Lease: "mesh-system/meshd", Identity: "meshd-0", Leading: true, Leader: "meshd-0", Since: now, Terms: 1})
	h := New(newFixture().g, WithProxies(proxies), WithProblems(newFakeProblems(now)), WithReplica(rep.get),
		WithClusters("home", newFakeClusters(now).get), WithPollInterval(10*time.Millisecond))
	defer h.Close()
	// Values for the routes' path segments, and the queries they need.
	segments := strings.NewReplacer("{name}", "endpoints", "{id}", url.PathEscape(proxies.Proxies()[1].NodeID))
	queries := map[string]string{"api/explain": "?key=default/api", "api/collections/{name}/items": "?limit=3"}
	for _, route := range slices.Sorted(maps.Keys(js.routes)) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/"+segments.Replace(route)+queries[route], nil))
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d: %s", route, rec.Code, rec.Body)
			continue
		}
		checkAnswer(t, js, js.routes[route], route, rec.Body.Bytes())
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/api/collections/nope", nil))
	checkAnswer(t, js, "ErrorBody", "a 404", rec.Body.Bytes())

	events, stop := serveStream(t, h)
	defer stop()
	for seen := map[string]bool{}; len(seen) < len(js.events); {
		ev, err := events.next()
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		typ, ok := js.events[ev.name]
		if !ok {
			t.Errorf("the stream sends %q events, which fields.js does not declare", ev.name)
			continue
		}
		if !seen[ev.name] {
			seen[ev.name] = true
			checkAnswer(t, js, typ, ev.name+" event", []byte(ev.data))
		}
	}
}

func checkAnswer(t *testing.T, js *fieldsFile, typ, what string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	for _, e := range js.conforms(typ, v, what) {
		t.Error(e)
	}
}
