// Package style checks the repository's own Go code against the rules of
// ../shared/STYLE.md that neither the compiler nor vet enforces, so a
// change that breaks one fails `go test ./...` rather than a review.
//
// It holds tests only. TestFunctionLength keeps every function at 60
// lines or fewer outside benchmark programs; the functions that were
// longer when the rule came in are listed in
// testdata/known-long-functions.txt, a list that may only shrink.
package style
