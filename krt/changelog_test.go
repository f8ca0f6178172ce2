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
