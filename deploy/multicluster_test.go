package deploy_test

import (
	"io"
	"os"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/deploy"
)

// remoteSecretsRBAC is the example that lets meshd read the remote
// clusters' Secrets (--remote-secrets).
const remoteSecretsRBAC = "examples/multicluster/10-remote-secrets-rbac.yaml"

// TestRemoteSecretsExample checks the multicluster example against the
// Deployment: with --remote-secrets added, its arguments are valid and
// read the Secrets of the pod's own namespace; the example binds its Role
// there to the Deployment's service account; and the Role grants the
// list and watch of that namespace's Secrets, nothing more. The grants are
// checked on a service account of the test's own, so the service account
// of the other tests keeps no Secret access.
func TestRemoteSecretsExample(t *testing.T) {
	dep := deploymentConfig(t)
	cfg, err := app.ParseFlags(append(deploymentArgs(t), "--remote-secrets"), io.Discard)
	if err != nil {
		t.Fatalf("meshd rejects the Deployment's args with --remote-secrets: %v", err)
	}
	if !cfg.RemoteSecrets || cfg.RemoteSecretsNamespace != "" || cfg.ClusterName != dep.ClusterName {
		t.Errorf("--remote-secrets: namespace %q, cluster %q; want the pod's namespace, %q",
			cfg.RemoteSecretsNamespace, cfg.ClusterName, dep.ClusterName)
	}

	data, err := os.ReadFile(remoteSecretsRBAC)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode(data)
	if err != nil || len(objs) != 2 {
		t.Fatalf("%s: %d objects (%v), want a Role and its RoleBinding", remoteSecretsRBAC, len(objs), err)
	}
	binding := objs[1]
	want := []any{map[string]any{"kind": rbacv1.ServiceAccountKind, "name": "meshd", "namespace": saNamespace}}
	if subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects"); binding.GetKind() != "RoleBinding" ||
		binding.GetNamespace() != saNamespace || !slices.EqualFunc(subjects, want, sameSubject) {
		t.Errorf("%s binds %s in %s to %v, want a RoleBinding in %s to %v", remoteSecretsRBAC,
			binding.GetKind(), binding.GetNamespace(), subjects, saNamespace, want)
	}

	const tester = "remote-secrets-example"
	user := "system:serviceaccount:" + saNamespace + ":" + tester
	_ = unstructured.SetNestedSlice(binding.Object, []any{map[string]any{"kind": rbacv1.ServiceAccountKind, "name": tester, "namespace": saNamespace}}, "subjects")
	env := deployed(t)
	if err := deploy.ApplyObjects(t.Context(), env.Config, objs); err != nil {
		t.Fatal(err)
	}
	checkRemoteSecretsGrants(t, kubeClient(t, env.Config), user)
}

// checkRemoteSecretsGrants checks, once the authorizer knows the
// example's Role, that user may list and watch the Secrets of meshd's
// namespace and do nothing else with Secrets.
func checkRemoteSecretsGrants(t *testing.T, kc kubernetes.Interface, user string) {
	t.Helper()
	var err error
	list := access{verb: "list", resource: "secrets", namespace: saNamespace, allowed: true}
	deadline := time.Now().Add(30 * time.Second)
	for ok := false; !ok; time.Sleep(20 * time.Millisecond) {
		if ok, err = reviewAs(t.Context(), kc, user, saGroups, list); err != nil {
			t.Fatal(err)
		}
		if !ok && time.Now().After(deadline) {
			t.Fatalf("the example's Role never allowed %s", list)
		}
	}
	for _, a := range []access{
		list,
		{verb: "watch", resource: "secrets", namespace: saNamespace, allowed: true},
		{verb: "get", resource: "secrets", namespace: saNamespace, name: "remote-west"},
		{verb: "create", resource: "secrets", namespace: saNamespace},
		{verb: "update", resource: "secrets", namespace: saNamespace, name: "remote-west"},
		{verb: "list", resource: "secrets", namespace: "default"},
		{verb: "watch", resource: "secrets"},
	} {
		got, err := reviewAs(t.Context(), kc, user, saGroups, a)
		if err != nil {
			t.Fatal(err)
		}
		if got != a.allowed {
			t.Errorf("%s: allowed %v, want %v", a, got, a.allowed)
		}
	}
}

// sameSubject compares a subject of an unstructured RoleBinding.
func sameSubject(a, b any) bool {
	am, bm := a.(map[string]any), b.(map[string]any)
	return am["kind"] == bm["kind"] && am["name"] == bm["name"] && am["namespace"] == bm["namespace"]
}
