package krt

// readList holds the recorded reads of one input, where the reverse
// indexes they are filed in point at them: the first two in the input's
// entry, the others, rarely any, in more. A transformation usually reads
// one or two collections, so a read costs its record's 24 bytes in the
// entry, where a record of its own would cost those and a pointer to it
// in a slice of the entry's. A record stays where it is while filed:
// replace is given the reads unfiled and files them again. The zero value
// holds no read.
type readList struct {
	first [2]fetchRec // in use from the start while filter is not nil
	more  *[]fetchRec // the reads after the first two; nil when none
}

// len returns the number of reads held.
func (l *readList) len() int {
	switch {
	case l.first[0].filter == nil:
		return 0
	case l.first[1].filter == nil:
		return 1
	case l.more == nil:
		return 2
	}
	return 2 + len(*l.more)
}

// at returns read i, which must be held.
func (l *readList) at(i int) *fetchRec {
	if i < len(l.first) {
		return &l.first[i]
	}
	return &(*l.more)[i-len(l.first)]
}

// each calls fn with every read, in the order they were made.
func (l *readList) each(fn func(*fetchRec)) {
	for i, n := 0, l.len(); i < n; i++ {
		fn(l.at(i))
	}
}

// appendTo appends copies of the first n reads to out.
func (l *readList) appendTo(out []fetchRec, n int) []fetchRec {
	for i := range n {
		out = append(out, *l.at(i))
	}
	return out
}

// replace makes recs, none of them filed, the reads held, as records of
// in. The caller unfiles the reads held before and files the new ones.
func (l *readList) replace(in *inputState, recs []fetchRec) {
	*l = readList{}
	n := copy(l.first[:], recs)
	if len(recs) > n {
		more := append([]fetchRec(nil), recs[n:]...)
		l.more = &more
	}
	for i := range len(recs) {
		l.at(i).in = in
	}
}

// matches reports whether read i, if held, has a filter equal to fs, and
// so is of the same collection.
func (l *readList) matches(i int, fs *filterSet) bool {
	return i < l.len() && l.at(i).filter.equal(fs)
}
