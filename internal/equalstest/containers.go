package equalstest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// opaque reports whether t is a struct with unexported fields, which
// cannot be rebuilt field by field.
func opaque(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

// varyStruct varies each field of a struct in turn; an opaque struct is
// one leaf, whose variant is its zero value.
func varyStruct(v reflect.Value, path string, yield func(variant) bool) bool {
	if opaque(v.Type()) {
		if v.IsZero() {
			return yield(variant{path: path, zero: true})
		}
		return yield(variant{path: path, value: reflect.Zero(v.Type())})
	}
	field := func(i int) (reflect.Value, string) { return v.Field(i), path + "." + v.Type().Field(i).Name }
	return varyParts(v.NumField(), field, func(i int, f reflect.Value) reflect.Value {
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		out.Field(i).Set(f)
		return out
	}, yield)
}

// varyParts varies each of n parts of a value in turn: part(i) is the
// i-th and its path, and with(i, p) a copy of the value holding p as its
// i-th part, in which each variant of a part is yielded.
func varyParts(n int, part func(int) (reflect.Value, string), with func(int, reflect.Value) reflect.Value, yield func(variant) bool) bool {
	for i := range n {
		p, path := part(i)
		ok := vary(p, path, func(e variant) bool {
			if e.zero {
				return yield(e)
			}
			return yield(variant{path: e.path, value: with(i, e.value)})
		})
		if !ok {
			return false
		}
	}
	return true
}

// varyPointer yields nil, then the variants of the pointee behind a new
// pointer; an opaque pointee is replaced by a zero one.
func varyPointer(v reflect.Value, path string, yield func(variant) bool) bool {
	if !yield(variant{path: path + " (nil)", value: reflect.Zero(v.Type())}) {
		return false
	}
	if opaque(v.Type().Elem()) {
		if v.Elem().IsZero() {
			return yield(variant{path: "*" + path, zero: true})
		}
		return yield(variant{path: "*" + path, value: reflect.New(v.Type().Elem())})
	}
	return vary(v.Elem(), "(*"+path+")", func(e variant) bool {
		if e.zero {
			return yield(e)
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e.value)
		return yield(variant{path: e.path, value: p})
	})
}

// varySlice yields the slice without its last element, then the variants
// of each element in a copy of the slice.
func varySlice(v reflect.Value, path string, yield func(variant) bool) bool {
	if !yield(variant{path: path + " (shorter)", value: v.Slice(0, v.Len()-1)}) {
		return false
	}
	return varyElems(v, path, yield)
}

// varyElems varies each element of v (a slice or an array) in turn, in
// copies of v.
func varyElems(v reflect.Value, path string, yield func(variant) bool) bool {
	elem := func(i int) (reflect.Value, string) { return v.Index(i), fmt.Sprintf("%s[%d]", path, i) }
	return varyParts(v.Len(), elem, func(i int, e reflect.Value) reflect.Value {
		var out reflect.Value
		if v.Kind() == reflect.Slice {
			out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		} else {
			out = reflect.New(v.Type()).Elem()
		}
		reflect.Copy(out, v)
		out.Index(i).Set(e)
		return out
	}, yield)
}

// varyMap yields, for each entry, the map without it, with its key changed,
// and with each variant of its value.
func varyMap(v reflect.Value, path string, yield func(variant) bool) bool {
	keys := v.MapKeys()
	// In a stable order, so that reports are.
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, k := range keys {
		at := fmt.Sprintf("%s[%v]", path, k)
		without := copyMap(v)
		without.SetMapIndex(k, reflect.Value{})
		if !yield(variant{path: at + " (removed)", value: without}) {
			return false
		}
		if nk, ok := changeLeaf(k); ok && !v.MapIndex(nk).IsValid() {
			rekeyed := copyMap(without)
			rekeyed.SetMapIndex(nk, v.MapIndex(k))
			if !yield(variant{path: at + " (key changed)", value: rekeyed}) {
				return false
			}
		}
		ok := vary(v.MapIndex(k), at, func(e variant) bool {
			if e.zero {
				return yield(e)
			}
			out := copyMap(v)
			out.SetMapIndex(k, e.value)
			return yield(variant{path: e.path, value: out})
		})
		if !ok {
			return false
		}
	}
	return true
}

func copyMap(v reflect.Value) reflect.Value {
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	for it := v.MapRange(); it.Next(); {
		out.SetMapIndex(it.Key(), it.Value())
	}
	return out
}
