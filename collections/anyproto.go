package collections

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

type anyMsg = anypb.Any

// packOptions marshal packed messages deterministically: the bytes inside
// an Any are not re-sorted when the outer message is marshalled, and
// replicas version resources by those bytes, so a map field packed in
// random order would make identical config look different.
var packOptions = proto.MarshalOptions{Deterministic: true}

// mustAny packs m into an Any. Marshalling a well-formed generated message
// cannot fail, so a failure is a programming error; the panic is isolated
// and recorded by krt.
func mustAny(m proto.Message) *anypb.Any {
	a := &anypb.Any{}
	if err := anypb.MarshalFrom(a, m, packOptions); err != nil {
		panic(fmt.Sprintf("collections: pack %T: %v", m, err))
	}
	return a
}

// mustMarshal marshals m deterministically, as mustAny does.
func mustMarshal(m proto.Message) []byte {
	b, err := packOptions.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("collections: marshal %T: %v", m, err))
	}
	return b
}
