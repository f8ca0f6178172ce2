package folder

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

// fileState is what the source knows of one file.
type fileState struct {
	sum uint64 // hash of the content last read, good or bad
	// objs are the objects of the last read that succeeded.
	objs map[objectID]entry
	// problems are those of the last read.
	problems []Problem
	failed   bool
}

// state is the source's model of the files: which objects each defines and
// which file wins each object. It does no I/O; apply turns file changes
// into collection writes.
type state struct {
	files map[string]*fileState
	// claims lists, sorted, the files defining each object; the first wins.
	claims map[objectID][]string
	// conflicts holds the objects with more than one claim.
	conflicts map[objectID]struct{}
}

func newState() state {
	return state{
		files:     map[string]*fileState{},
		claims:    map[objectID][]string{},
		conflicts: map[objectID]struct{}{},
	}
}

// writes are the collection changes one apply produces, per kind.
type writes struct {
	sets map[*kind][]runtime.Object
	dels map[*kind][]string
}

func (w *writes) empty() bool { return len(w.sets) == 0 && len(w.dels) == 0 }

// count is the number of objects the writes set or delete.
func (w *writes) count() int {
	n := 0
	for _, objs := range w.sets {
		n += len(objs)
	}
	for _, keys := range w.dels {
		n += len(keys)
	}
	return n
}

// apply records new contents for some files (nil: the file is gone) and
// returns the writes that bring the collections in line, and the objects
// it made conflicts (defined in more than one file) that were not. A
// file that failed keeps its last good objects.
func (st *state) apply(changes map[string]*parsed) (writes, []objectID) {
	affected := map[objectID]struct{}{}
	// Visit files in order so that claims are built the same way every time.
	paths := make([]string, 0, len(changes))
	for p := range changes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		p := changes[path]
		old := st.files[path]
		if p == nil {
			if old != nil {
				st.unclaim(path, old.objs, affected)
				delete(st.files, path)
			}
			continue
		}
		if p.failed {
			if old == nil {
				old = &fileState{}
				st.files[path] = old
			}
			old.sum, old.problems, old.failed = p.sum, p.problems, true
			continue
		}
		if old != nil {
			st.unclaim(path, old.objs, affected)
		}
		objs := make(map[objectID]entry, len(p.entries))
		for _, e := range p.entries {
			objs[e.id] = e
			st.claim(path, e.id)
			affected[e.id] = struct{}{}
		}
		st.files[path] = &fileState{sum: p.sum, objs: objs, problems: p.problems}
	}

	w := writes{sets: map[*kind][]runtime.Object{}, dels: map[*kind][]string{}}
	var started []objectID
	for id := range affected {
		owners := st.claims[id]
		if len(owners) > 1 {
			if _, was := st.conflicts[id]; !was {
				started = append(started, id)
			}
			st.conflicts[id] = struct{}{}
		} else {
			delete(st.conflicts, id)
		}
		if len(owners) == 0 {
			w.dels[id.kind] = append(w.dels[id.kind], id.key)
			continue
		}
		w.sets[id.kind] = append(w.sets[id.kind], st.files[owners[0]].objs[id].obj)
	}
	return w, started
}

func (st *state) claim(path string, id objectID) {
	owners := st.claims[id]
	i, found := slices.BinarySearch(owners, path)
	if !found {
		st.claims[id] = slices.Insert(owners, i, path)
	}
}

func (st *state) unclaim(path string, objs map[objectID]entry, affected map[objectID]struct{}) {
	for id := range objs {
		affected[id] = struct{}{}
		owners := st.claims[id]
		if i, found := slices.BinarySearch(owners, path); found {
			owners = slices.Delete(owners, i, i+1)
		}
		if len(owners) == 0 {
			delete(st.claims, id)
		} else {
			st.claims[id] = owners
		}
	}
}

// problems lists the problems of every file and every conflict, ordered by
// path, then line.
func (st *state) problems(displayPath func(string) string) []Problem {
	var out []Problem
	for _, f := range st.files {
		for _, p := range f.problems {
			p.Path = displayPath(p.Path)
			out = append(out, p)
		}
	}
	for id := range st.conflicts {
		owners := st.claims[id]
		winner := displayPath(owners[0])
		for _, loser := range owners[1:] {
			e := st.files[loser].objs[id]
			out = append(out, Problem{
				Path: displayPath(loser), Doc: e.doc, Line: e.line, Severity: SeverityError,
				Object:  describe(id),
				Message: fmt.Sprintf("conflict: also defined in %s, which wins (its path sorts first)", winner),
			})
		}
	}
	slices.SortFunc(out, func(a, b Problem) int {
		if a.Path != b.Path {
			if a.Path < b.Path {
				return -1
			}
			return 1
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		if a.Message < b.Message {
			return -1
		}
		if a.Message > b.Message {
			return 1
		}
		return 0
	})
	return out
}

// objects returns the number of objects in the collections.
func (st *state) objects() int { return len(st.claims) }

// failing returns the number of files whose last read failed.
func (st *state) failing() int {
	n := 0
	for _, f := range st.files {
		if f.failed {
			n++
		}
	}
	return n
}
