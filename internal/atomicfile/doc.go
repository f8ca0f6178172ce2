// Package atomicfile writes files that readers never see half written:
// the data goes to a temporary file in the target's directory, is synced
// and closed, and only then takes the target's name, by a rename (which
// replaces the old file) or a link (which fails if the name exists, for a
// create that only one writer wins).
//
// Write is the whole replace; WriteAll replaces several files that are
// read together; Temp is the first half, for callers that move the file
// into place themselves.
package atomicfile
