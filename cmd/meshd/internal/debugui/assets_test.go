package debugui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// moduleImport matches the static imports of the UI's modules, which are
// all relative: import { a, b } from './x.js';
var moduleImport = regexp.MustCompile(`(?m)^import [^;]+ from '\./([\w-]+\.js)';$`)

// TestModules checks that the page's entry module and what it imports,
// transitively, are exactly the embedded scripts: none is missing and
// none is left over.
func TestModules(t *testing.T) {
	embedded, err := fs.Glob(uiFS(), "*.js")
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if reached[name] {
			return
		}
		reached[name] = true
		src, err := fs.ReadFile(uiFS(), name)
		if err != nil {
			t.Errorf("a module imports %s, which is not embedded", name)
			return
		}
		for _, m := range moduleImport.FindAllStringSubmatch(string(src), -1) {
			visit(m[1])
		}
	}
	visit("main.js")
	var got []string
	for name := range reached {
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, embedded) {
		t.Errorf("modules reached from main.js %v, embedded %v", got, embedded)
	}
	for _, name := range embedded {
		src, _ := fs.ReadFile(uiFS(), name)
		if strings.Contains(string(src), "innerHTML") || strings.Contains(string(src), "outerHTML") {
			t.Errorf("%s sets markup; the UI builds elements and sets text only", name)
		}
	}
}

// TestAssetHeaders checks what lets a browser run the modules: a
// JavaScript type (browsers refuse a module served as anything else),
// nosniff, and a page policy that allows same-origin scripts only.
func TestAssetHeaders(t *testing.T) {
	h := New(newFixture().g)
	get := func(url string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d", url, rec.Code)
		}
		return rec
	}
	scripts, _ := fs.Glob(uiFS(), "*.js")
	for _, name := range append(scripts, "vendor/dagre.min.js") {
		rec := get("/debug/ui/" + name)
		if ct := rec.Header().Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
			t.Errorf("%s: Content-Type %q, want text/javascript", name, ct)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", name)
		}
	}
	if ct := get("/debug/ui/style.css").Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("style.css: Content-Type %q", ct)
	}
	page := get("/debug/ui")
	csp := page.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "connect-src 'self'", "default-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("page policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("page policy %q allows unsafe sources", csp)
	}
	// Every script the page loads is served from beside it.
	for _, m := range regexp.MustCompile(`<script[^>]* src="([^"]+)"`).FindAllStringSubmatch(page.Body.String(), -1) {
		if _, err := fs.Stat(assets, path.Clean(m[1])); err != nil {
			t.Errorf("the page loads %s, which is not embedded", m[1])
		}
	}
}
