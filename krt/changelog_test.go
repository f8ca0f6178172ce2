package krt

import (
	"fmt"
	"testing"
)

// TestChangeLog adds keys past the point where lookups move from a scan
// to a map, checking every lookup against the keys added so far, then
// resets the log and checks that it is empty and usable again.
func TestChangeLog(t *testing.T) {
	for _, hint := range []int{0, 3 * fewChanges} {
		t.Run(fmt.Sprintf("hint=%d", hint), func(t *testing.T) {
			var l changeLog[int]
			n := 3 * fewChanges
			for i := range n {
				key := fmt.Sprintf("key-%d", i)
				if l.find(key) >= 0 {
					t.Fatalf("%s found before it was added", key)
				}
				if pos := l.add(keyChange[int]{key: key, old: i, hadOld: true}, hint); pos != int32(i) {
					t.Fatalf("%s added at %d, want %d", key, pos, i)
				}
				for j := 0; j <= i; j++ {
					c := l.get(fmt.Sprintf("key-%d", j))
					if c == nil || c.old != j {
						t.Fatalf("after %d adds: key-%d reads %+v", i+1, j, c)
					}
				}
			}
			if l.len() != n {
				t.Fatalf("len %d, want %d", l.len(), n)
			}
			l.reset()
			if l.len() != 0 || l.get("key-0") != nil {
				t.Fatal("a reset log still holds its keys")
			}
			l.add(keyChange[int]{key: "again", old: 7}, 0)
			if c := l.get("again"); c == nil || c.old != 7 || l.get("key-1") != nil {
				t.Fatalf("after reset and one add: %+v", c)
			}
		})
	}
}

// TestChangeLogHintAfterSmall checks that a bulk change sizes a log that
// already holds a few entries, in an array kept from an earlier
// transaction, at once, and that the earlier entries stay found.
func TestChangeLogHintAfterSmall(t *testing.T) {
	var l changeLog[int]
	for i := range 2 * fewChanges {
		l.add(keyChange[int]{key: fmt.Sprintf("old-%d", i), old: i}, 0)
	}
	l.reset()
	for i := range 3 {
		l.add(keyChange[int]{key: fmt.Sprintf("old-%d", i), old: i}, 0)
	}
	const hint = 1000
	l.add(keyChange[int]{key: "bulk-0"}, hint)
	if cap(l.list) < hint {
		t.Fatalf("after an add with hint %d: capacity %d", hint, cap(l.list))
	}
	array := &l.list[:1][0]
	for i := 1; i < hint-3; i++ {
		l.add(keyChange[int]{key: fmt.Sprintf("bulk-%d", i), old: i}, hint)
	}
	if &l.list[0] != array {
		t.Fatal("the list was regrown within its hint")
	}
	for i := range 3 {
		if c := l.get(fmt.Sprintf("old-%d", i)); c == nil || c.old != i {
			t.Fatalf("old-%d reads %+v", i, c)
		}
	}
	if c := l.get("bulk-500"); c == nil || c.old != 500 {
		t.Fatalf("bulk-500 reads %+v", c)
	}
}

// TestChangeLogLargeRun checks that a log drops a large array after one
// large transaction, reuses it, zeroed, through a run of large ones, and
// drops it again after the first small one.
func TestChangeLogLargeRun(t *testing.T) {
	const n = 4 * largeChanges
	fill := func(l *changeLog[*int], prefix string, count int) {
		for i := range count {
			v := i
			l.add(keyChange[*int]{key: fmt.Sprintf("%s-%d", prefix, i), old: &v, hadOld: true}, count)
		}
	}
	var l changeLog[*int]
	fill(&l, "build", n)
	l.reset()
	if l.list != nil || l.at != nil {
		t.Fatal("the first large transaction's array was kept")
	}
	fill(&l, "change1", n)
	l.reset()
	if cap(l.list) < n || l.at == nil {
		t.Fatalf("a second large transaction's array was dropped: capacity %d", cap(l.list))
	}
	if full := l.list[:n]; full[0].old != nil || full[n-1].key != "" {
		t.Fatal("a kept array still holds the last transaction's entries")
	}
	array := &l.list[:1][0]
	fill(&l, "change2", n)
	if &l.list[0] != array {
		t.Fatal("a run of large transactions did not reuse the array")
	}
	if c := l.get("change2-7"); c == nil || *c.old != 7 || l.get("change1-7") != nil {
		t.Fatalf("change2-7 reads %+v; change1-7 found: %v", c, l.get("change1-7") != nil)
	}
	l.reset()
	fill(&l, "small", 2)
	l.reset()
	if cap(l.list) > largeChanges || l.at != nil {
		t.Fatalf("a small transaction kept a large array: capacity %d", cap(l.list))
	}
}
