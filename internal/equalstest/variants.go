package equalstest

import (
	"fmt"
	"iter"
	"reflect"
)

// variant is a value that differs from the original in one place, path; or,
// with zero set, a place that is zero and so cannot be varied honestly.
type variant struct {
	path  string
	value reflect.Value
	zero  bool
}

// variants yields the one-place variants of v. It never modifies v: each
// variant copies the containers on its path and shares the rest.
func variants(v any) iter.Seq[variant] {
	return func(yield func(variant) bool) {
		vary(reflect.ValueOf(v), "", yield)
	}
}

// vary yields the variants of v, whose place is path, and reports whether
// to go on.
func vary(v reflect.Value, path string, yield func(variant) bool) bool {
	if isZero(v) {
		return yield(variant{path: path, zero: true})
	}
	switch v.Kind() {
	case reflect.Struct:
		return varyStruct(v, path, yield)
	case reflect.Pointer:
		return varyPointer(v, path, yield)
	case reflect.Slice:
		return varySlice(v, path, yield)
	case reflect.Array:
		return varyElems(v, path, yield)
	case reflect.Map:
		return varyMap(v, path, yield)
	case reflect.Interface:
		return vary(v.Elem(), path, func(e variant) bool {
			if e.zero {
				return yield(e)
			}
			return yield(variant{path: e.path, value: convert(e.value, v.Type())})
		})
	}
	leaf, ok := changeLeaf(v)
	if !ok {
		panic(fmt.Sprintf("equalstest: %s: cannot vary a %s", path, v.Type()))
	}
	return yield(variant{path: path, value: leaf})
}

// isZero reports whether v is a zero leaf or an empty container. Structs
// are never zero here: their fields are checked one by one.
func isZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Struct:
		return false
	case reflect.Slice, reflect.Map, reflect.Array:
		return v.Len() == 0
	}
	return v.IsZero()
}

// changeLeaf returns a scalar changed, or false for a kind it cannot
// change (func, chan, unsafe pointer).
func changeLeaf(v reflect.Value) (reflect.Value, bool) {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Bool:
		out.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		out.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		out.SetFloat(v.Float() + 1)
	case reflect.Complex64, reflect.Complex128:
		out.SetComplex(v.Complex() + 1)
	case reflect.String:
		out.SetString(v.String() + "'")
	default:
		return reflect.Value{}, false
	}
	return out, true
}

// convert returns v as a value of type t, which v's type implements.
func convert(v reflect.Value, t reflect.Type) reflect.Value {
	out := reflect.New(t).Elem()
	out.Set(v)
	return out
}
