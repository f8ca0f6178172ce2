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
	// Severity is SeverityError (also when empty): the source keeps its
	// last good objects; or SeverityWarning: the objects loaded, maybe not
	// as meant.
	Severity Severity `json:"severity,omitempty"`
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
