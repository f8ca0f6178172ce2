package krt_test

import (
	"maps"
	"reflect"
	"slices"
	"testing"
)

// TestBenchEquals changes each field of each benchmark item type in turn
// and expects Equals to see it: a missed field would let the early cutoff
// drop changes, and the benchmarks would measure less work than they claim.
//
// The main module's internal/equalstest does this in general; krt's tests
// cannot import it, since krt is a module that requires nothing, so this
// covers just the field kinds the benchmark items have.
func TestBenchEquals(t *testing.T) {
	labels := map[string]string{"group": "g0"}
	tests := []struct {
		name  string
		check func(*testing.T)
	}{
		{"benchItem", func(t *testing.T) {
			checkFieldsCompared(t, benchItem{Name: "i0", Namespace: "ns0", Labels: labels, Selector: labels, Value: 1})
		}},
		{"benchPod", func(t *testing.T) {
			checkFieldsCompared(t, benchPod{Name: "pod-0", Namespace: "ns-0", IP: "10.0.0.0", Labels: labels})
		}},
		{"benchService", func(t *testing.T) {
			checkFieldsCompared(t, benchService{Name: "svc-0", Namespace: "ns-0", Selector: labels})
		}},
		{"benchWorkload", func(t *testing.T) {
			checkFieldsCompared(t, benchWorkload{Key: "ns-0/pod-0", IP: "10.0.0.0", Services: []string{"ns-0/svc-0"}})
		}},
		{"benchEndpoints", func(t *testing.T) {
			checkFieldsCompared(t, benchEndpoints{Service: "ns-0/svc-0", IPs: []string{"10.0.0.0"}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

// checkFieldsCompared reports each field of the struct full whose change
// Equals misses, either way round.
func checkFieldsCompared[T interface{ Equals(T) bool }](t *testing.T, full T) {
	t.Helper()
	if !full.Equals(full) {
		t.Fatalf("%T does not Equals itself", full)
	}
	rv := reflect.ValueOf(full)
	for i := range rv.NumField() {
		changed := reflect.New(rv.Type()).Elem()
		changed.Set(rv)
		f := changed.Field(i)
		switch v := f.Interface().(type) {
		case string:
			f.SetString(v + "x")
		case int:
			f.SetInt(int64(v) + 1)
		case []string:
			f.Set(reflect.ValueOf(append(slices.Clone(v), "x")))
		case map[string]string:
			m := maps.Clone(v)
			m["changed"] = "x"
			f.Set(reflect.ValueOf(m))
		default:
			t.Fatalf("%T.%s: a %T field; teach checkFieldsCompared to change it", full, rv.Type().Field(i).Name, v)
		}
		other := changed.Interface().(T)
		if full.Equals(other) || other.Equals(full) {
			t.Errorf("%T: Equals misses a change to %s", full, rv.Type().Field(i).Name)
		}
	}
}
