package equalstest

import "reflect"

// deepCopy returns a copy of v that shares no map, slice or pointer with it,
// except pointers to opaque structs (which cannot be copied field by field;
// a protobuf message must not be copied by value).
func deepCopy(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Struct:
		out.Set(v)
		if opaque(v.Type()) {
			return out
		}
		for i := range v.NumField() {
			out.Field(i).Set(deepCopy(v.Field(i)))
		}
	case reflect.Pointer:
		if v.IsNil() || opaque(v.Type().Elem()) {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out = reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(deepCopy(it.Key()), deepCopy(it.Value()))
		}
	case reflect.Interface:
		if !v.IsNil() {
			out.Set(deepCopy(v.Elem()))
		}
	default:
		out.Set(v)
	}
	return out
}
