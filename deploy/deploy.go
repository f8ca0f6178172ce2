// Package deploy holds the Kubernetes manifests that run meshd as replicas
// in a cluster (the YAML files of this folder, applied with
// `kubectl apply -f deploy/`; see README.md), embedded, and applies them
// from Go for tests that need meshd's real namespace, service account and
// roles in an API server:
//
//	if err := deploy.Apply(ctx, env.Config); err != nil { ... }
//
// The files are applied in name order, which is the order kubectl takes
// them in; their numbers put the namespace before what lives in it.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// FS holds the manifests: every *.yaml file of this folder.
//
//go:embed *.yaml
var FS embed.FS

// FieldManager is the field manager Apply writes as.
const FieldManager = "meshd-deploy"

// Files returns the names of the manifests in FS in the order they are
// applied: by name.
func Files() []string {
	names, err := fs.Glob(FS, "*.yaml")
	if err != nil {
		panic(err) // the pattern is constant and valid
	}
	slices.Sort(names)
	return names
}

// Objects decodes every manifest, in the order they are applied (see
// Decode).
func Objects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, name := range Files() {
		data, err := FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Decode splits YAML into its documents and decodes each into an object,
// skipping documents that hold only comments. A document with a key given
// twice, or without apiVersion or kind, is an error. Unknown fields are
// left for the API server to reject (see ApplyObjects).
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if obj.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: %s %s has no apiVersion", i, obj.GetKind(), obj.GetName())
		}
		out = append(out, obj)
	}
}

// Apply creates every manifest's object in the cluster of cfg, or updates
// it to the manifest where it exists: applying twice changes nothing. See
// ApplyObjects.
func Apply(ctx context.Context, cfg *rest.Config) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	return ApplyObjects(ctx, cfg, objs)
}

// ApplyObjects creates each object in order, or, where one of that name
// exists, replaces it with the object (fields the object leaves out are
// reset to their defaults, as by `kubectl replace`). The API server
// validates strictly: an unknown or duplicate field fails the object. The
// kinds are resolved through discovery once; objects of a CRD created in
// the same call are not found unless the CRD is served before they come.
// It stops at the first failure; the objects before it stay applied.
func ApplyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for _, obj := range objs {
		if err := apply(ctx, dyn, mapper, obj.DeepCopy()); err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), objectName(obj), err)
		}
	}
	return nil
}

func apply(ctx context.Context, dyn dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		// A CRD applied earlier in the call may have been served since
		// the mapper last asked.
		mapper.Reset()
		m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			return errors.New("namespaced, but names no namespace")
		}
		ri = dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
	}
	_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager, FieldValidation: "Strict"})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Update needs the current resourceVersion; another writer may move
	// it between the read and the write.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
		_, err = ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager, FieldValidation: "Strict"})
		return err
	})
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
