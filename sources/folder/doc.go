// Package folder is a source that reads Kubernetes manifests from a
// directory, or from an fs.FS such as an embedded one, into the same krt
// collections the Kubernetes source produces.
//
// Files named *.yaml, *.yml and *.json are read recursively; hidden entries
// (names starting with ".") are skipped. A YAML file may hold several
// documents separated by "---" lines, and any document may be a v1 List.
// Each document is decoded with a Kubernetes scheme holding the kinds that
// have a collection: the kinds of sources.Inputs, plus those added with
// AddKind. Documents of other kinds are kept as unstructured objects in
// Source.Unstructured and reported as warnings.
//
// A directory source (NewDir) watches the tree with fsnotify once Run is
// called and applies changes incrementally: a changed file is decoded again
// and only its objects change. Editors' atomic saves (write a temporary
// file, rename it over the original) and the symlink swap of a Kubernetes
// ConfigMap volume ("..data") are handled. Bursts of events are debounced
// (WithDebounce).
//
// # Bad input never loses data
//
// A file is applied as a whole: when any of its documents fails to parse or
// to validate, the file's objects stay as they were last loaded successfully
// and the failure is reported, with file, document number and line, through
// Problems, the log and Stats, until the file is fixed or deleted. Two files
// defining the same object is a conflict: the file whose path sorts first
// wins and the others are reported.
//
// # Consistency
//
// The initial load is one krt transaction, after which every collection is
// synced. Every later batch of changes (one debounce period) is one
// transaction too. Objects are shared with the collections and must not be
// modified. The folder source sets each object's ResourceVersion to a hash
// of its document, so an unchanged document compares equal at once.
package folder
