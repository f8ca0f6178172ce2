package folder

import (
	"fmt"
	"strings"
)

// Severity says whether a problem kept a file from loading.
type Severity string

const (
	// SeverityError: the file's last good objects stay in place (or, for a
	// conflict, the other file's object is used).
	SeverityError Severity = "error"
	// SeverityWarning: the object was loaded, but maybe not as intended
	// (for example a kind without a collection, kept as unstructured).
	SeverityWarning Severity = "warning"
)

// Problem is one thing wrong with the input, as shown in logs and the debug
// UI.
type Problem struct {
	// Path is the file's path: under the directory for NewDir, within the
	// file system for NewFS.
	Path string `json:"path"`
	// Doc is the 1-based number of the document within the file, counting
	// non-empty documents; 0 when the problem concerns the whole file.
	Doc int `json:"doc,omitempty"`
	// Line is the 1-based line of the problem when known, else of the
	// document's start; 0 when unknown.
	Line     int      `json:"line,omitempty"`
	Severity Severity `json:"severity"`
	// Object names the object concerned ("Service default/web"), if known.
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	// UnknownKind is set on the warning about a kind without a collection:
	// the kind, "ServiceAccount (v1)", so that readers can report many
	// objects of one kind as one problem. The message is the same for
	// every object of the kind.
	UnknownKind string `json:"unknownKind,omitempty"`
}

// String formats p as "path:line: document N: object: message".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Doc > 0 {
		fmt.Fprintf(&b, ": document %d", p.Doc)
	}
	if p.Object != "" {
		fmt.Fprintf(&b, ": %s", p.Object)
	}
	fmt.Fprintf(&b, ": %s", p.Message)
	return b.String()
}

// Stats counts what a source has loaded and rejected.
type Stats struct {
	// Files is the number of manifest files currently known.
	Files int `json:"files"`
	// Objects is the number of objects in the collections.
	Objects int `json:"objects"`
	// FailingFiles is the number of files whose last read failed and that
	// serve their last good objects (or none).
	FailingFiles int `json:"failingFiles"`
	// Conflicts is the number of objects defined by more than one file.
	Conflicts int `json:"conflicts"`
	// Loads counts the transactions the source has written.
	Loads uint64 `json:"loads"`
	// FileErrors counts every rejected read of a file.
	FileErrors uint64 `json:"fileErrors"`
	// WatchErrors counts errors reported by the file watcher.
	WatchErrors uint64 `json:"watchErrors"`
}
