package folder

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	securityv1beta1 "istio.io/api/security/v1beta1"
	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// checkProtoSpec decodes the spec of a kind whose spec is a protobuf
// message (Istio's) strictly. Their generated decoders drop unknown
// fields, so a misspelt field would otherwise vanish, and a policy with it
// mean less than its author wrote.
func checkProtoSpec(obj runtime.Object, js []byte) error {
	var spec proto.Message
	switch obj.(type) {
	case *securityv1.PeerAuthentication:
		spec = &securityv1beta1.PeerAuthentication{}
	case *securityv1.AuthorizationPolicy:
		spec = &securityv1beta1.AuthorizationPolicy{}
	default:
		return nil
	}
	var raw struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(js, &raw); err != nil || len(raw.Spec) == 0 || string(raw.Spec) == "null" {
		return nil // the object decoded already; an absent spec is empty
	}
	if err := protojson.Unmarshal(raw.Spec, spec); err != nil {
		// protojson's messages carry a non-breaking space; keep them
		// plain for terminals and logs.
		return fmt.Errorf("spec: %s", strings.ReplaceAll(err.Error(), "\u00a0", " "))
	}
	return nil
}
