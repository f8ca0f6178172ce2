package krt

// changeLog is what one transaction changed in one collection: for each
// changed key, in the order first changed, its value before the
// transaction and the slot of its value now. Propagation and commit read
// the values through it rather than looking the key up in the items
// again, and a reader at an older version finds the value before it
// there (see snapshot.go).
//
// Most transactions change one key or a few: lookups scan the list until
// it holds more than fewChanges, and go through an index of positions
// from then on: a slotIndex over the list, as itemTable's over its slots,
// where a Go map would keep every key again and cost a bulk load of
// 10,000 items a map insertion each, on the writer's goroutine. The zero
// value is an empty log.
type changeLog[T any] struct {
	list []keyChange[T]
	at   slotIndex // positions in list, once list is long
	// lastBig says the transaction before held more than largeChanges
	// entries (see reset).
	lastBig bool
}

// keyChange is one changed key of a changeLog. It keeps the value before
// the transaction, which the items no longer hold, and the slot of the
// value now, which they do: a mesh-wide change writes one value per key
// into the log, not two, in an array as long as the keys changed.
type keyChange[T any] struct {
	key    string
	old    T
	slot   int32 // the key's slot in the items, while hasCur
	hadOld bool
	hasCur bool
	round  uint32 // the store's round when the key last changed
}

const fewChanges = 8

// largeChanges is the most entries a log keeps its array for between
// any two transactions (see reset).
const largeChanges = 64

func (l *changeLog[T]) len() int { return len(l.list) }

// find returns the position of key's entry, or -1 when the transaction
// has not changed it.
func (l *changeLog[T]) find(key string) int32 {
	if l.at != nil {
		return l.lookup(key, hashKey(key))
	}
	for i := range l.list {
		if l.list[i].key == key {
			return int32(i)
		}
	}
	return -1
}

// get returns key's entry, or nil when the transaction has not changed
// it. The pointer is valid until the next add.
func (l *changeLog[T]) get(key string) *keyChange[T] {
	if i := l.find(key); i >= 0 {
		return &l.list[i]
	}
	return nil
}

// add appends a new entry for key, which the log must not hold yet, and
// returns its position. hint, when larger than the list's capacity, is how
// many entries the transaction may add: the log is sized for them at
// once, also when it kept a small array from an earlier transaction.
func (l *changeLog[T]) add(c keyChange[T], hint int) int32 {
	if hint > fewChanges && hint > cap(l.list) {
		l.grow(hint)
	}
	i := int32(len(l.list))
	l.list = append(l.list, c)
	switch {
	case l.at != nil:
		l.at = l.at.grow(len(l.list), l.hashOf)
		l.index(i)
	case len(l.list) > fewChanges:
		l.reindex(2 * len(l.list))
	}
	return i
}

// grow makes room for n more entries in the list and the index of
// positions, so that a bulk change neither regrows the list, copying
// every entry each time, nor rehashes the index.
func (l *changeLog[T]) grow(n int) {
	l.list = growTouched(l.list, n)
	l.reindex(len(l.list) + n)
}

// reindex makes a fresh index, large enough for n entries, of the list.
func (l *changeLog[T]) reindex(n int) {
	l.at = slotIndex(nil).grow(n, l.hashOf)
	for j := range l.list {
		l.index(int32(j))
	}
}

// index files position i, whose key the index does not hold yet.
func (l *changeLog[T]) index(i int32) { l.at.insert(l.hashOf(i), i) }

// lookup returns the position of key's entry, whose hash is h, or -1.
func (l *changeLog[T]) lookup(key string, h uint32) int32 {
	mask := l.at.mask()
	for pos := h & mask; ; pos = (pos + 1) & mask {
		e := l.at[pos]
		if e == 0 {
			return -1
		}
		if l.at.tagged(e, h) {
			if i := l.at.slotOf(e); l.list[i].key == key {
				return i
			}
		}
	}
}

// hashOf returns the hash of the key at position i.
func (l *changeLog[T]) hashOf(i int32) uint32 { return hashKey(l.list[i].key) }

// reset empties the log for the next transaction, keeping a small one's
// array and map. A large one's are dropped, as they would hold memory a
// bulk load needed once, unless the transaction before was large too and
// this one filled at least half of them: a run of large transactions,
// such as repeated mesh-config changes that each recompute every
// workload, then reuses one array and map rather than allocating and
// zeroing megabytes each time. The first small transaction after such a
// run drops them.
func (l *changeLog[T]) reset() {
	big := len(l.list) > largeChanges
	if cap(l.list) > largeChanges && !(l.inLargeRun() && 2*len(l.list) >= cap(l.list)) {
		*l = changeLog[T]{lastBig: big}
		return
	}
	clear(l.list)
	l.list = l.list[:0]
	clear(l.at)
	l.lastBig = big
}

// inLargeRun reports whether the log holds more than largeChanges entries
// and the transaction before held as many: the second or a later of a run
// of large transactions, whose scratch space is worth keeping.
func (l *changeLog[T]) inLargeRun() bool {
	return l.lastBig && len(l.list) > largeChanges
}
