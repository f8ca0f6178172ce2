package style

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFunctionLines is the longest a function may be, counted from its
// func keyword to its closing brace.
const maxFunctionLines = 60

// benchmarkMains are the directories of benchmark and load programs,
// whose run functions read best as one script of phases.
var benchmarkMains = []string{"bench", "internal/bench", "internal/loadtest"}

func TestFunctionLength(t *testing.T) {
	root := filepath.Join("..", "..")
	var long []longFunction
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(root, path, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		found, err := longFunctions(path)
		long = append(long, found...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	known := readKnownLong(t)
	for _, l := range long {
		if !known[l.key()] {
			t.Errorf("%s: %d lines, over %d", l.where, l.lines, maxFunctionLines)
		}
		delete(known, l.key())
	}
	for k := range known {
		t.Errorf("%s is no longer over %d lines: remove it from %s", k, maxFunctionLines, knownLongFile)
	}
}

// knownLongFile lists the functions that were over the limit when the rule
// came in, as "file function" lines, until they are split. The list may
// only shrink: a function not on it fails the test, and so does one on it
// that is short now.
const knownLongFile = "testdata/known-long-functions.txt"

func readKnownLong(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(knownLongFile)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			known[line] = true
		}
	}
	return known
}

// skipDir reports whether a directory holds no code the rule covers.
func skipDir(root, path, name string) bool {
	if name == ".git" || name == "testdata" || name == "vendor" || name == "node_modules" {
		return true
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, b := range benchmarkMains {
		if rel == b || strings.HasSuffix(rel, "/"+b) {
			return true
		}
	}
	return false
}

// longFunction is one function over the limit.
type longFunction struct {
	file, name, where string
	lines             int
}

// key names the function as knownLongFile does: its file from the
// repository root and its name, so moving it within the file keeps it.
func (l longFunction) key() string { return l.file + " " + l.name }

// longFunctions lists the functions in one file that are too long.
func longFunctions(path string) ([]longFunction, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var long []longFunction
	file := strings.TrimPrefix(filepath.ToSlash(path), "../../")
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			return true
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		if lines := end.Line - start.Line + 1; lines > maxFunctionLines {
			name := funcName(fn)
			where := fmt.Sprintf("%s:%d %s", file, start.Line, name)
			long = append(long, longFunction{file: file, name: name, where: where, lines: lines})
		}
		return false
	})
	return long, nil
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
