package debugui

import (
	"encoding/json"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// encodeValue encodes an item or dump for the UI. Proto messages (xDS
// resources) go through protojson, which knows oneofs and Any; a value
// encoding/json cannot encode becomes its %+v text rather than failing the
// whole response.
func encodeValue(v any) json.RawMessage {
	if m, ok := v.(proto.Message); ok {
		if b, err := protojson.Marshal(m); err == nil {
			return b
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("%+v", v))
	}
	return b
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
