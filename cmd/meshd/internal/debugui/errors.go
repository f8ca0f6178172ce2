package debugui

import "errors"

// ErrNotFound is what a Proxies implementation wraps when ConfigDump is asked
// for a proxy it does not know; the handler answers 404 for it and 500 for
// any other error.
var ErrNotFound = errors.New("debugui: not found")
