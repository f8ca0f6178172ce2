package xdsclients

import (
	"fmt"

	"google.golang.org/grpc/mem"
)

// rawCodec sends and receives messages as their bytes, unparsed: the
// backends answer with their address, and every client sends an empty
// request, so no generated code is needed on either side.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	switch m := v.(type) {
	case []byte:
		return mem.BufferSlice{mem.SliceBuffer(m)}, nil
	case *[]byte:
		return mem.BufferSlice{mem.SliceBuffer(*m)}, nil
	}
	return nil, fmt.Errorf("raw codec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("raw codec: cannot unmarshal into %T", v)
	}
	*p = data.Materialize()
	return nil
}
