package debugui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// DebugValuer is implemented by item types whose fields do not show what
// they hold, such as a struct with only unexported fields: the UI shows what
// DebugValue returns instead of the item.
type DebugValuer interface {
	DebugValue() any
}

var (
	protoMessageType  = reflect.TypeFor[proto.Message]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
)

// encodeValue encodes an item or dump for the UI:
//
//   - a DebugValuer as what its DebugValue returns;
//   - a proto message (an xDS resource) with protojson, which knows oneofs,
//     well-known types and Any;
//   - a struct with proto message fields field by field, so that those
//     fields get protojson too;
//   - anything else with encoding/json, and what that cannot encode as its
//     %+v text rather than failing the whole response.
func encodeValue(v any) json.RawMessage {
	if d, ok := v.(DebugValuer); ok {
		v = d.DebugValue()
	}
	if m, ok := v.(proto.Message); ok {
		if rv := reflect.ValueOf(m); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return json.RawMessage("null") // protojson would show an empty message
		}
		if b, err := protojson.Marshal(m); err == nil {
			return b
		}
	}
	if b, ok := encodeProtoFields(v); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("%+v", v))
	}
	return b
}

// encodeProtoFields encodes a struct, or a pointer to one, that has an
// exported proto message field, as a JSON object of its exported fields
// named as encoding/json would name them. It reports false for any other
// value, and for types that encode themselves.
func encodeProtoFields(v any) (json.RawMessage, bool) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Type().Implements(jsonMarshalerType) {
		return nil, false
	}
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, false
		}
		rv = rv.Elem()
	}
	rt := rv.Type()
	if rt.Kind() != reflect.Struct || rt.Implements(jsonMarshalerType) {
		return nil, false
	}
	hasProto := false
	for f := range rt.Fields() {
		if f.IsExported() && f.Type.Implements(protoMessageType) {
			hasProto = true
			break
		}
	}
	if !hasProto {
		return nil, false
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(encodeValue(rv.Field(i).Interface()))
	}
	buf.WriteByte('}')
	return buf.Bytes(), true
}

type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(errorBody{Error: msg})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func (h *Handler) writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.opts.log.Error("debug UI: encoding response", "error", err)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("encoding response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if _, err := w.Write(append(b, '\n')); err != nil {
		h.opts.log.Debug("debug UI: writing response", "error", err)
	}
}
