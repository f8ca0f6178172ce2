package folder

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestUnknownKindMessage(t *testing.T) {
	known := []string{"Service", "Pod", "EndpointSlice", "HTTPRoute", "GRPCRoute", "ConfigMap", "Node", "Namespace"}
	for _, tc := range []struct {
		gvk  schema.GroupVersionKind
		want string
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"},
			"kind ServiceAccount (v1) has no collection; kept as unstructured"},
		{schema.GroupVersionKind{Version: "v1", Kind: "Servic"},
			"kind Servic (v1) has no collection; kept as unstructured; did you mean Service?"},
		{schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HttpRoute"},
			"kind HttpRoute (gateway.networking.k8s.io/v1) has no collection; kept as unstructured; did you mean HTTPRoute?"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			"kind Deployment (apps/v1) has no collection; kept as unstructured; meshd does not run workloads: in a folder, endpoints come from Pods or EndpointSlices (see the demo: meshd with no source flag)"},
		// Short kinds: two edits are too many for three letters.
		{schema.GroupVersionKind{Version: "v1", Kind: "Job"},
			"kind Job (v1) has no collection; kept as unstructured; meshd does not run workloads: in a folder, endpoints come from Pods or EndpointSlices (see the demo: meshd with no source flag)"},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			"kind Widget (example.com/v1) has no collection; kept as unstructured"},
	} {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			if got := unknownKindMessage(tc.gvk, known); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"servic", "service", 1}, {"kitten", "sitting", 3}, {"pod", "node", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
