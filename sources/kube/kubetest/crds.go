package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// GatewayRoutes are the Gateway API resources InstallGatewayCRDs serves.
var GatewayRoutes = []schema.GroupVersionResource{
	{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "grpcroutes"},
}

// IstioPolicies are the Istio resources InstallIstioSecurityCRDs serves.
var IstioPolicies = []schema.GroupVersionResource{
	{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"},
	{Group: "security.istio.io", Version: "v1", Resource: "authorizationpolicies"},
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallGatewayCRDs creates the Gateway API's own standard CRDs of
// GatewayRoutes (their schemas, validation and status subresource), read
// from the sigs.k8s.io/gateway-api module this one builds with, and waits
// until each resource is served. CRDs that exist already are left as they
// are.
func InstallGatewayCRDs(ctx context.Context, cfg *rest.Config) error {
	dir, err := moduleDir(ctx, "sigs.k8s.io/gateway-api")
	if err != nil {
		return err
	}
	var crds []*unstructured.Unstructured
	for _, gvr := range GatewayRoutes {
		data, err := os.ReadFile(filepath.Join(dir, "config", "crd", "standard", gvr.Group+"_"+gvr.Resource+".yaml"))
		if err != nil {
			return fmt.Errorf("%s CRD: %w", gvr.Resource, err)
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &crd.Object); err != nil {
			return fmt.Errorf("%s CRD: %w", gvr.Resource, err)
		}
		crds = append(crds, crd)
	}
	return installCRDs(ctx, cfg, crds, GatewayRoutes)
}

// InstallIstioSecurityCRDs creates Istio's own CRDs of IstioPolicies, read
// from the istio.io/api module this one builds with, and waits until each
// resource is served.
func InstallIstioSecurityCRDs(ctx context.Context, cfg *rest.Config) error {
	dir, err := moduleDir(ctx, "istio.io/api")
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, "kubernetes", "customresourcedefinitions.gen.yaml"))
	if err != nil {
		return fmt.Errorf("istio CRDs: %w", err)
	}
	var crds []*unstructured.Unstructured
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &crd.Object); err != nil {
			return fmt.Errorf("istio CRDs: %w", err)
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		if slices.ContainsFunc(IstioPolicies, func(g schema.GroupVersionResource) bool { return g.Group == group && g.Resource == plural }) {
			crds = append(crds, crd)
		}
	}
	if len(crds) != len(IstioPolicies) {
		return fmt.Errorf("istio CRDs: found %d of the %d security CRDs", len(crds), len(IstioPolicies))
	}
	return installCRDs(ctx, cfg, crds, IstioPolicies)
}

// moduleDir locates a module of the build with `go list -m`.
func moduleDir(ctx context.Context, module string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return "", fmt.Errorf("locating the %s module: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// installCRDs creates crds, leaving those that exist, and waits until
// every resource of gvrs is served.
func installCRDs(ctx context.Context, cfg *rest.Config, crds []*unstructured.Unstructured, gvrs []schema.GroupVersionResource) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	for _, crd := range crds {
		_, err = dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{FieldValidation: "Strict"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the %s CRD: %w", crd.GetName(), err)
		}
	}
	// A new CRD is served moments after it is created, and discovery may
	// name it later still: a source started in between would skip it.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, gvr := range gvrs {
		if err := waitServed(ctx, cfg, dyn, gvr); err != nil {
			return err
		}
	}
	return nil
}

// waitServed waits until discovery names gvr and a list of it works.
func waitServed(ctx context.Context, cfg *rest.Config, dyn dynamic.Interface, gvr schema.GroupVersionResource) error {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	for {
		err := servedNow(ctx, disco, dyn, gvr)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not served: %w (last error: %v)", gvr.Resource, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func servedNow(ctx context.Context, disco discovery.DiscoveryInterface, dyn dynamic.Interface, gvr schema.GroupVersionResource) error {
	list, err := disco.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }) {
		return fmt.Errorf("discovery does not list %s yet", gvr.Resource)
	}
	_, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
	return err
}
