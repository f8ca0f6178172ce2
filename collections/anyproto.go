package collections

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

type anyMsg = anypb.Any

// mustAny packs m into an Any. Marshalling a well-formed generated message
// cannot fail, so a failure is a programming error; the panic is isolated
// and recorded by krt.
func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(fmt.Sprintf("collections: pack %T: %v", m, err))
	}
	return a
}
