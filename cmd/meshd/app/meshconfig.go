package app

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshd/meshd/cmd/meshd/internal/problem"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube"
	"github.com/meshd/meshd/sources/meshconfig"
)

// validateMeshConfigMap checks --mesh-config-map: a namespace and a name
// as Kubernetes spells them, with a source that can hold the ConfigMap,
// and not together with --mesh-config.
func (c Config) validateMeshConfigMap() error {
	if c.MeshConfigMap == "" {
		return nil
	}
	if _, _, err := splitObjectRef(c.MeshConfigMap); err != nil {
		return fmt.Errorf("--mesh-config-map %q: %w", c.MeshConfigMap, err)
	}
	if c.MeshConfigFile != "" {
		return errors.New("--mesh-config and --mesh-config-map both name a mesh config: give one")
	}
	if c.Demo() {
		return errors.New("--mesh-config-map needs a source that holds the ConfigMap: give --kubeconfig, --in-cluster or --config-dir")
	}
	return nil
}

// splitObjectRef splits "NAMESPACE/NAME" of a namespaced object.
func splitObjectRef(ref string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", errors.New("want NAMESPACE/NAME")
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return "", "", fmt.Errorf("want NAMESPACE/NAME: namespace: %s", strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", "", fmt.Errorf("want NAMESPACE/NAME: name: %s", strings.Join(errs, "; "))
	}
	return namespace, name, nil
}

// configMapWatch is the one watch of ConfigMaps KubeOptions asks for.
func configMapWatch(ref string) kube.Option {
	if ref == "" {
		return kube.WithoutWatch("configmaps")
	}
	namespace, name, _ := splitObjectRef(ref) // checked by Validate
	// A field selector on the name: the list and watch are then
	// authorized for that one ConfigMap, which a Role can grant by
	// resourceName (deploy/24-role-mesh-config.yaml).
	return kube.WithWatch("configmaps", kube.Watch{Namespace: namespace, FieldSelector: "metadata.name=" + name})
}

// KubeOptions returns the options meshd gives its Kubernetes source for c:
// what it watches, which its RBAC roles must grant. ConfigMaps are watched
// only for --mesh-config-map, and then only that one.
func KubeOptions(c Config) []kube.Option {
	return []kube.Option{configMapWatch(c.MeshConfigMap)}
}

// buildMeshConfig returns the mesh config collection: the file's, the
// ConfigMap's (found among the sources' ConfigMaps in), or else the
// sources' own, empty, which the model reads as meshconfig.Default().
func (a *App) buildMeshConfig(in sources.Inputs) (krt.Collection[meshconfig.MeshConfig], error) {
	g := a.model.Graph
	// The sources log their own "source" (the file, or the ConfigMap).
	logger := meshconfig.WithLogger(a.log)
	switch {
	case a.cfg.MeshConfigMap != "":
		namespace, name, _ := splitObjectRef(a.cfg.MeshConfigMap) // checked by Validate
		cm := meshconfig.FromConfigMap(g, in.ConfigMaps, namespace, name, logger)
		a.ready.add("mesh config configmap "+a.cfg.MeshConfigMap, cm.Config().Synced())
		a.problems = append(a.problems, meshConfigProblems(cm.Status))
		return cm.Config(), nil
	case a.cfg.MeshConfigFile != "":
		f := meshconfig.NewFile(g, a.cfg.MeshConfigFile, logger)
		if err := f.Load(); err != nil {
			// The error names the file.
			return nil, fmt.Errorf("--mesh-config: %w", err)
		}
		a.ready.add("mesh config "+a.cfg.MeshConfigFile, f.Config().Synced())
		a.components = append(a.components, component{"mesh config", f.Run})
		a.problems = append(a.problems, meshConfigProblems(f.Status))
		return f.Config(), nil
	}
	return in.MeshConfig, nil
}

// meshConfigProblems reports a rejected mesh config to the debug UI.
func meshConfigProblems(status func() meshconfig.Status) func() []problem.Problem {
	return func() []problem.Problem {
		st := status()
		if st.Valid {
			return nil
		}
		return []problem.Problem{{Source: st.Source, Object: "mesh config", Error: st.Error + " (serving the last good config)"}}
	}
}
