package app

import (
	"cmp"
	"io"
	"log/slog"
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"

	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/xds"
)

// Translation is the xDS that a configuration yields for one node, as
// `meshd translate` prints it.
type Translation struct {
	// Node is the node id translated for.
	Node string
	// Namespace is the node's namespace as the xDS server reads it
	// (xds.NodeNamespace); "" when the id names none.
	Namespace string
	// Isolated says whether namespace isolation was on, the only case in
	// which the node decides what it may see.
	Isolated bool
	// Resources are ordered by type (listeners, routes, clusters,
	// endpoints), then name.
	Resources []TranslatedResource
}

// TranslatedResource is one resource of a Translation.
type TranslatedResource struct {
	TypeURL string
	Name    string
	Message proto.Message
}

// Translate builds the mesh cfg describes, as New does, but binds no port
// and starts nothing, and returns every resource the xDS server would let
// the proxy nodeID see: all listeners and clusters (what a wildcard
// subscription gets, and the server listeners, which a gRPC server gets
// by naming its own) and all route configurations and load assignments (a
// proxy gets those it names). Errors are New's: one line, naming the flag
// or file at fault.
func Translate(cfg Config, nodeID string) (Translation, error) {
	if err := cfg.Validate(); err != nil {
		return Translation{}, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a := &App{cfg: cfg, log: log, model: &Model{Graph: krt.NewGraph()}, ready: &readiness{}}
	if err := a.build(); err != nil {
		return Translation{}, err
	}
	node := &corev3.Node{Id: nodeID}
	ns, hasNS := xds.NodeNamespace(node)
	t := Translation{Node: nodeID, Namespace: ns, Isolated: cfg.NamespaceIsolation}
	m := a.model.Mesh
	addVisible(&t, xds.ListenerType, m.Listeners, hasNS)
	addVisible(&t, xds.RouteType, m.RouteConfigurations, hasNS)
	addVisible(&t, xds.ClusterType, m.Clusters, hasNS)
	addVisible(&t, xds.EndpointType, m.ClusterLoadAssignments, hasNS)
	return t, nil
}

// addVisible adds the resources of c that t's node may see, by name.
func addVisible[M proto.Message](t *Translation, typeURL string, c krt.Collection[collections.Resource[M]], hasNS bool) {
	var out []TranslatedResource
	for _, r := range c.List() {
		if t.Isolated && !visibleToNode(resourceVisibility(r), t.Namespace, hasNS) {
			continue
		}
		out = append(out, TranslatedResource{TypeURL: typeURL, Name: r.Name, Message: r.Message()})
	}
	slices.SortFunc(out, func(a, b TranslatedResource) int { return cmp.Compare(a.Name, b.Name) })
	t.Resources = append(t.Resources, out...)
}

// visibleToNode is what the xDS server decides under isolation: a node
// with a namespace sees what that namespace may; one without sees only
// what is not restricted to some namespaces.
func visibleToNode(v xds.Visibility, ns string, hasNS bool) bool {
	if !hasNS {
		return v.All() || v.Except()
	}
	return v.Allows(ns)
}
