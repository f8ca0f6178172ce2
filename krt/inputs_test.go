package krt

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestInputTable checks inputTable against a map through random adds and
// removes, including removals of an entry the table no longer holds.
func TestInputTable(t *testing.T) {
	var table inputTable
	model := map[string]*inputState{}
	rng := rand.New(rand.NewPCG(1, 2))
	table.reserve(10)
	for step := range 20000 {
		key := fmt.Sprintf("ns/in-%d", rng.IntN(500))
		held := model[key]
		switch {
		case held == nil:
			st := &inputState{key: key}
			table.add(st)
			model[key] = st
		case rng.IntN(4) == 0:
			table.remove(&inputState{key: key}) // a stale entry: no effect
		default:
			table.remove(held)
			delete(model, key)
		}
		if len(table.all()) != len(model) {
			t.Fatalf("step %d: table holds %d entries, model %d", step, len(table.all()), len(model))
		}
		if step%97 != 0 {
			continue
		}
		for k, want := range model {
			if got := table.get(k); got != want {
				t.Fatalf("step %d: get(%q) = %p, want %p", step, k, got, want)
			}
		}
		for _, st := range table.all() {
			if model[st.key] != st {
				t.Fatalf("step %d: all() yields %q, which the model lacks", step, st.key)
			}
		}
	}
	if got := table.get("ns/absent"); got != nil {
		t.Fatalf("get of an absent key = %v, want nil", got)
	}
}
