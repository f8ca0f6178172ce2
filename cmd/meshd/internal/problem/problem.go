package problem

import "time"

// Problem is one problem with the configuration sources.
type Problem struct {
	// Source says where: a file path, "kubernetes", "mesh-config".
	Source string `json:"source"`
	// Object names the object concerned, if any: "HTTPRoute default/web".
	Object string    `json:"object,omitempty"`
	Error  string    `json:"error"`
	Since  time.Time `json:"since,omitzero"`
	// Severity is SeverityError (also when empty): configuration is not
	// served as written (the source keeps its last good objects, a route
	// is rejected or fails part of its traffic); or SeverityWarning: the
	// objects loaded, maybe not as meant.
	Severity Severity `json:"severity,omitempty"`
	// Collection names the graph node the problem concerns, if any: the
	// debug UI counts its problems on that node.
	Collection string `json:"collection,omitempty"`
}

// Severity says whether a Problem kept configuration from being served.
type Severity string

// The severities of a Problem.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Lister is the view of the sources' problems the debug UI and the metrics
// read: files that do not parse, objects that fail validation, watches that
// fail. Implementations must be safe for concurrent use and cheap: readers
// call Problems from request goroutines, on every poll of the UI and every
// scrape.
type Lister interface {
	// Problems returns the problems present now; an empty slice when all
	// is well.
	Problems() []Problem
}
