package krt

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// TestLearnedAliasAnswersByIdentity checks the bookkeeping of a shared
// filter's aliases: an equal map is learned once, the filter's own map
// and maps past aliasCap are not, a filter without selects learns
// nothing, and a learned map is then answered by identity: changed
// against the rules after it was learned, it still compares equal.
func TestLearnedAliasAnswersByIdentity(t *testing.T) {
	own := map[string]string{"app": "a"}
	twin := map[string]string{"app": "a"}
	other := map[string]string{"app": "b"}
	f := &filterSet{index: -1, hasSelects: true, selects: own}
	if !f.sameSelects(twin) || f.sameSelects(other) {
		t.Fatal("before any alias: want twin equal and other not")
	}
	f.learnAlias(own)
	if atomic.LoadPointer(&f.aliases) != nil {
		t.Fatal("the filter's own map was learned as an alias")
	}
	f.learnAlias(twin)
	f.learnAlias(twin)
	a := (*mapAliases)(atomic.LoadPointer(&f.aliases))
	if a == nil || a.n.Load() != 1 {
		t.Fatalf("aliases after learning twin twice: %+v, want one", a)
	}
	twin["app"] = "changed"
	if !f.sameSelects(twin) {
		t.Fatal("a learned alias was compared by content, not identity")
	}
	for i := range 2 * aliasCap {
		f.learnAlias(map[string]string{"app": fmt.Sprint(i)})
	}
	if n := a.n.Load(); n != aliasCap {
		t.Fatalf("%d aliases after learning many, want the cap %d", n, aliasCap)
	}
	plain := &filterSet{index: -1, hasLabels: true, labels: own}
	plain.learnAlias(twin)
	if atomic.LoadPointer(&plain.aliases) != nil {
		t.Fatal("a filter without selects learned an alias")
	}
}
