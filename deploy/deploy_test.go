package deploy_test

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
	"github.com/meshd/meshd/sources/kube"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// The service account meshd's pods run as, as the API server names it.
const (
	saNamespace = "meshd-system"
	saUser      = "system:serviceaccount:" + saNamespace + ":meshd"
)

// saGroups are the groups a token of the service account carries.
var saGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"}

func ref[T any](v T) *T { return &v }

func kubeClient(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestApply applies the manifests a second time (deployed applied them
// once) and checks that this changed nothing, that every object is there,
// and that the server kept what matters.
func TestApply(t *testing.T) {
	env := deployed(t)
	ctx := t.Context()
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	before := resourceVersions(t, env.Config, objs)
	if err := deploy.Apply(ctx, env.Config); err != nil {
		t.Fatalf("applying again: %v", err)
	}
	// An update that changes nothing is not written: every resourceVersion
	// stays.
	if after := resourceVersions(t, env.Config, objs); !slices.Equal(before, after) {
		t.Errorf("applying again changed objects:\nbefore %v\nafter  %v", before, after)
	}

	kc := kubeClient(t, env.Config)
	checkAppliedDeployment(t, kc)
	checkAppliedService(t, kc)
	pdb, err := kc.PolicyV1().PodDisruptionBudgets(saNamespace).Get(ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, saNamespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace labels %v: want Pod Security restricted enforced", ns.Labels)
	}
}

// resourceVersions reads every one of objs from the server, where all
// must exist, and returns them as kind/name@resourceVersion.
func resourceVersions(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured) []string {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubeClient(t, cfg).Discovery()))
	var out []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		cur, err := ri.Get(t.Context(), o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s %s not applied: %v", o.GetKind(), o.GetName(), err)
		}
		out = append(out, o.GetKind()+"/"+o.GetName()+"@"+cur.GetResourceVersion())
	}
	return out
}

// checkAppliedDeployment checks the Deployment the server holds: its
// replicas, arguments and rollout, and that Pod Security admits its pods
// and only with their securityContext.
func checkAppliedDeployment(t *testing.T, kc kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	dep, err := kc.AppsV1().Deployments(saNamespace).Get(ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	if *dep.Spec.Replicas != 2 || dep.Generation != 1 || !slices.Contains(args, "--leader-elect") || !slices.Contains(args, "--in-cluster") {
		t.Errorf("Deployment: replicas %d, generation %d, args %q; want 2, 1, --leader-elect --in-cluster",
			*dep.Spec.Replicas, dep.Generation, args)
	}
	if dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || dep.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		t.Errorf("Deployment strategy %+v: want a rolling update that keeps every replica until its successor is ready", dep.Spec.Strategy)
	}
	// A pod of the Deployment's template is admitted in its namespace,
	// whose Pod Security level is restricted (a dry run: no pod is made).
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "meshd-dry-run", Labels: dep.Spec.Template.Labels}, Spec: dep.Spec.Template.Spec}
	if _, err := kc.CoreV1().Pods(saNamespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
		t.Errorf("a pod of the Deployment is refused: %v", err)
	}
	pod.Name, pod.Spec.SecurityContext = "meshd-dry-run-root", nil
	if _, err := kc.CoreV1().Pods(saNamespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("a pod without the pod securityContext: err = %v, want Forbidden by Pod Security", err)
	}
}

// checkAppliedService checks that the server allocated the Service an IP
// and kept its xDS port.
func checkAppliedService(t *testing.T, kc kubernetes.Interface) {
	t.Helper()
	svc, err := kc.CoreV1().Services(saNamespace).Get(t.Context(), "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := svc.Spec.Ports[0]; svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone ||
		p.Name != "grpc-xds" || p.Port != 15010 || p.AppProtocol == nil || *p.AppProtocol != "grpc" {
		t.Errorf("Service: clusterIP %q, port %+v; want an allocated IP and grpc-xds 15010 (appProtocol grpc)", svc.Spec.ClusterIP, p)
	}
}

// TestApplyStrict checks that the API server rejects an unknown field,
// both when ApplyObjects creates an object and when it updates one.
func TestApplyStrict(t *testing.T) {
	env := needEnv(t)
	ctx := t.Context()
	cm := func(name string, extra string) []*unstructured.Unstructured {
		objs, err := deploy.Decode([]byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {a: b}\n%s", name, extra)))
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	name := fmt.Sprintf("strict-%d", time.Now().UnixNano())
	if err := deploy.ApplyObjects(ctx, env.Config, cm(name+"-new", "spec: {}\n")); err == nil || !strings.Contains(err.Error(), `unknown field "spec"`) {
		t.Errorf("creating with an unknown field: err = %v, want unknown field", err)
	}
	if err := deploy.ApplyObjects(ctx, env.Config, cm(name, "")); err != nil {
		t.Fatal(err)
	}
	if err := deploy.ApplyObjects(ctx, env.Config, cm(name, "binaryDatum: {}\n")); err == nil || !strings.Contains(err.Error(), `unknown field "binaryDatum"`) {
		t.Errorf("updating with an unknown field: err = %v, want unknown field", err)
	}
}

// access is one request the service account may or may not make.
type access struct {
	verb, group, resource, subresource, namespace, name string
	allowed                                             bool
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	return fmt.Sprintf("%s %s %s/%s", a.verb, r, a.namespace, a.name)
}

// review asks the API server whether the service account may make a.
func review(ctx context.Context, kc kubernetes.Interface, a access) (bool, error) {
	return reviewAs(ctx, kc, saUser, saGroups, a)
}

// reviewAs asks the API server whether user, in groups, may make a.
func reviewAs(ctx context.Context, kc kubernetes.Interface, user string, groups []string, a access) (bool, error) {
	sar, err := kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource,
				Namespace: a.namespace, Name: a.name,
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

// waitAuthorized waits until the API server's authorizer knows the
// roles: it caches them through informers, so a request right after Apply
// may still be refused.
func waitAuthorized(t *testing.T, env *kubetest.Env) {
	t.Helper()
	kc := kubeClient(t, env.Config)
	probes := []access{
		{verb: "list", resource: "services"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: saNamespace, name: "meshd"},
		{verb: "watch", resource: "configmaps", namespace: saNamespace, name: "meshd"},
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range probes {
		for {
			ok, err := review(t.Context(), kc, a)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the service account may still not %s", a)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestRBAC checks, with SubjectAccessReviews, that the service account may
// make each request meshd makes and none of some it must not.
func TestRBAC(t *testing.T) {
	var table []access
	table = append(table, watchedAccess()...)
	table = append(table, routeStatusAccess()...)
	table = append(table, configMapAccess()...)
	table = append(table, leaseAccess()...)
	table = append(table, forbiddenAccess()...)
	checkAccess(t, table)
}

// checkAccess asks the API server, once the manifests are applied and
// their roles known to its authorizer, whether the service account may
// make each request of table, and fails t where the answer is not the
// one table gives.
func checkAccess(t *testing.T, table []access) {
	t.Helper()
	env := deployed(t)
	waitAuthorized(t, env)
	kc := kubeClient(t, env.Config)
	for _, a := range table {
		got, err := review(t.Context(), kc, a)
		if err != nil {
			t.Fatal(err)
		}
		if got != a.allowed {
			t.Errorf("%s: allowed %v, want %v", a, got, a.allowed)
		}
	}
}

// gatewayGroup is the API group of the Gateway API's routes.
const gatewayGroup = "gateway.networking.k8s.io"

// watchedAccess is the informers' list and watch, cluster-wide and in any
// one namespace; of what meshd watches it writes nothing (route status
// aside, see routeStatusAccess).
func watchedAccess() []access {
	var table []access
	for _, r := range []struct{ group, resource string }{
		{"", "services"}, {"", "pods"}, {"", "namespaces"}, {"", "nodes"},
		{"discovery.k8s.io", "endpointslices"}, {gatewayGroup, "httproutes"}, {gatewayGroup, "grpcroutes"},
	} {
		for _, verb := range []string{"list", "watch"} {
			table = append(table,
				access{verb: verb, group: r.group, resource: r.resource, allowed: true},
				access{verb: verb, group: r.group, resource: r.resource, namespace: "shop", allowed: true})
		}
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			table = append(table, access{verb: verb, group: r.group, resource: r.resource, namespace: "shop", name: "x"})
		}
	}
	return table
}

// routeStatusAccess is the routes' status, which the leader reads and
// updates, and may not patch or delete.
func routeStatusAccess() []access {
	var table []access
	for _, r := range []string{"httproutes", "grpcroutes"} {
		table = append(table,
			access{verb: "get", group: gatewayGroup, resource: r, namespace: "shop", name: "web", allowed: true},
			access{verb: "get", group: gatewayGroup, resource: r, subresource: "status", namespace: "shop", name: "web", allowed: true},
			access{verb: "update", group: gatewayGroup, resource: r, subresource: "status", namespace: "shop", name: "web", allowed: true},
			access{verb: "patch", group: gatewayGroup, resource: r, subresource: "status", namespace: "shop", name: "web"},
			access{verb: "delete", group: gatewayGroup, resource: r, subresource: "status", namespace: "shop", name: "web"},
		)
	}
	return table
}

// leaseAccess is the leader election's Lease: meshd's own, in meshd's
// namespace, and no Lease elsewhere.
func leaseAccess() []access {
	const coord = "coordination.k8s.io"
	return []access{
		{verb: "create", group: coord, resource: "leases", namespace: saNamespace, allowed: true},
		{verb: "get", group: coord, resource: "leases", namespace: saNamespace, name: "meshd", allowed: true},
		{verb: "update", group: coord, resource: "leases", namespace: saNamespace, name: "meshd", allowed: true},
		{verb: "delete", group: coord, resource: "leases", namespace: saNamespace, name: "meshd"},
		{verb: "update", group: coord, resource: "leases", namespace: saNamespace, name: "other"},
		{verb: "list", group: coord, resource: "leases", namespace: saNamespace},
		{verb: "create", group: coord, resource: "leases", namespace: "kube-system"},
		{verb: "get", group: coord, resource: "leases", namespace: "kube-system", name: "meshd"},
		{verb: "update", group: coord, resource: "leases", namespace: "kube-system", name: "meshd"},
		{verb: "update", group: coord, resource: "leases", namespace: "default", name: "meshd"},
	}
}

// forbiddenAccess is what meshd never needs: secrets, events, workloads,
// roles or impersonation.
func forbiddenAccess() []access {
	return []access{
		{verb: "get", resource: "secrets", namespace: saNamespace, name: "x"},
		{verb: "list", resource: "secrets"},
		{verb: "watch", resource: "secrets", namespace: "shop"},
		{verb: "create", resource: "events", namespace: saNamespace},
		{verb: "create", group: "events.k8s.io", resource: "events", namespace: saNamespace},
		{verb: "create", resource: "pods", namespace: saNamespace},
		{verb: "update", resource: "services", subresource: "status", namespace: "shop", name: "x"},
		{verb: "list", group: "apps", resource: "deployments"},
		{verb: "update", group: "apps", resource: "deployments", namespace: saNamespace, name: "meshd"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "meshd"},
		{verb: "impersonate", resource: "users", name: "admin"},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: saNamespace, name: "meshd"},
	}
}

// runSourceAs runs a Kubernetes source made with opts as user until done
// returns, and fails t if done or the source fails.
func runSourceAs(t *testing.T, env *kubetest.Env, user string, opts []kube.Option, done func(ctx context.Context, src *kube.Source) error) {
	t.Helper()
	clients, err := kube.ClientsForConfig(env.ConfigAs(user))
	if err != nil {
		t.Fatal(err)
	}
	src := kube.New(krt.NewGraph(), clients, opts...)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- src.Run(ctx) }()
	err = done(ctx, src)
	cancel()
	if runErr := <-stopped; runErr != nil {
		t.Fatalf("Run: %v", runErr)
	}
	if err != nil {
		t.Fatalf("as %s: %v", user, err)
	}
}

// deploymentConfig is the configuration the Deployment runs meshd with.
func deploymentConfig(t *testing.T) app.Config {
	t.Helper()
	cfg, err := app.ParseFlags(deploymentArgs(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// deploymentArgs are the arguments the Deployment runs meshd with.
func deploymentArgs(t *testing.T) []string {
	t.Helper()
	dep := get[*appsv1.Deployment](t, manifests(t), "Deployment", "meshd")
	return slices.Clone(dep.Spec.Template.Spec.Containers[0].Args)
}

// createMeshConfigMap creates, as the administrator, the ConfigMap the
// Deployment's --mesh-config-map names, until the test ends.
func createMeshConfigMap(t *testing.T, env *kubetest.Env) {
	t.Helper()
	admin := kubeClient(t, env.Config)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "meshd", Namespace: saNamespace},
		Data: map[string]string{"mesh": "domainSuffix: cluster.local"}}
	if _, err := admin.CoreV1().ConfigMaps(saNamespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.CoreV1().ConfigMaps(saNamespace).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
}

// configMapAccess is what the service account may do with ConfigMaps:
// list and watch the one holding the mesh config (as an informer whose
// field selector names it does), and nothing else.
func configMapAccess() []access {
	var table []access
	for _, verb := range []string{"list", "watch"} {
		table = append(table,
			access{verb: verb, resource: "configmaps", namespace: saNamespace, name: "meshd", allowed: true},
			access{verb: verb, resource: "configmaps", namespace: saNamespace},
			access{verb: verb, resource: "configmaps", namespace: saNamespace, name: "other"},
			access{verb: verb, resource: "configmaps", namespace: "shop", name: "meshd"},
			access{verb: verb, resource: "configmaps"})
	}
	for _, verb := range []string{"get", "create", "update", "patch", "delete"} {
		table = append(table, access{verb: verb, resource: "configmaps", namespace: saNamespace, name: "meshd"})
	}
	return table
}

// TestServiceAccountRequests makes meshd's writes as the service account,
// through impersonation (kubetest.Env.ConfigAs and KubeconfigAs): route
// status and the Lease go through; the route's spec, a Service, Secrets
// and a Lease elsewhere are forbidden.
func TestServiceAccountRequests(t *testing.T) {
	env := deployed(t)
	waitAuthorized(t, env)
	ctx := t.Context()
	admin := kubeClient(t, env.Config)
	saCfg := env.ConfigAs(saUser)
	sa := kubeClient(t, saCfg)
	checkActsAsServiceAccount(t, env, sa)

	// Reads.
	_, err := sa.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	wantOK(t, "list services", err)
	_, err = sa.CoreV1().Secrets(saNamespace).List(ctx, metav1.ListOptions{})
	wantForbidden(t, "list secrets", err)
	svc, err := admin.CoreV1().Services(saNamespace).Get(ctx, "meshd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Labels["changed"] = "by-meshd"
	_, err = sa.CoreV1().Services(saNamespace).Update(ctx, svc, metav1.UpdateOptions{})
	wantForbidden(t, "update a Service", err)

	checkLeaseRequests(t, admin, sa)
	checkRouteStatusRequests(t, env, admin, saCfg)
}

// wantForbidden fails t unless err is the API server's Forbidden.
func wantForbidden(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: err = %v, want Forbidden", what, err)
	}
}

// wantOK fails t if err is set.
func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// checkActsAsServiceAccount checks that both ways of acting as the service
// account, sa and a kubeconfig from KubeconfigAs, reach the server as it,
// with its groups.
func checkActsAsServiceAccount(t *testing.T, env *kubetest.Env, sa kubernetes.Interface) {
	t.Helper()
	path, err := env.KubeconfigAs(t.TempDir(), saUser)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]kubernetes.Interface{"ConfigAs": sa, "KubeconfigAs": kubeClient(t, fromFile)} {
		r, err := c.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if u := r.Status.UserInfo; u.Username != saUser || !slices.Contains(u.Groups, "system:serviceaccounts:"+saNamespace) {
			t.Errorf("%s acts as %s %v, want %s in its namespace's group", name, u.Username, u.Groups, saUser)
		}
	}
}

// checkLeaseRequests makes, as sa, what client-go's elector does with the
// Lease, and no more. The administrator removes what it creates, so the
// test can run again on the same API server (-count).
func checkLeaseRequests(t *testing.T, admin, sa kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	leases := sa.CoordinationV1().Leases(saNamespace)
	t.Cleanup(func() {
		for _, name := range []string{"meshd", "other"} {
			_ = admin.CoordinationV1().Leases(saNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	_, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "meshd"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ref("replica-a"), LeaseDurationSeconds: ref[int32](15)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the Lease: %v", err)
	}
	lease, err := leases.Get(ctx, "meshd", metav1.GetOptions{})
	wantOK(t, "get the Lease", err)
	if err == nil {
		lease.Spec.HolderIdentity = ref("replica-b")
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		wantOK(t, "take the Lease over", err)
	}
	wantForbidden(t, "delete the Lease", leases.Delete(ctx, "meshd", metav1.DeleteOptions{}))
	_, err = sa.CoordinationV1().Leases("default").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "meshd"}}, metav1.CreateOptions{})
	wantForbidden(t, "create a Lease in default", err)
	// create cannot be limited by name, so another Lease may be created in
	// meshd's namespace, but not renewed.
	other, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{})
	wantOK(t, "create another Lease in meshd's namespace", err)
	if err == nil {
		_, err = leases.Update(ctx, other, metav1.UpdateOptions{})
		wantForbidden(t, "update another Lease", err)
	}
}

// checkRouteStatusRequests writes, as the service account of saCfg, route
// status as the leader does, in a new namespace: the status goes through,
// the route's spec and its deletion do not.
func checkRouteStatusRequests(t *testing.T, env *kubetest.Env, admin kubernetes.Interface, saCfg *rest.Config) {
	t.Helper()
	ctx := t.Context()
	ns := fmt.Sprintf("routes-%d", time.Now().UnixNano())
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gwAdmin, err := gatewayclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gwSA, err := gatewayclient.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	parent := gatewayv1.ParentReference{Group: ref[gatewayv1.Group](""), Kind: ref[gatewayv1.Kind]("Service"), Name: "web"}
	status := gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{{
		ParentRef:      parent,
		ControllerName: "meshd.io/mesh-controller",
		Conditions: []metav1.Condition{{
			Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "attached",
			ObservedGeneration: 1, LastTransitionTime: metav1.Now(),
		}},
	}}}
	spec := gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}}

	hr := writeStatusAs(t, "HTTPRoute", gwAdmin.GatewayV1().HTTPRoutes(ns), gwSA.GatewayV1().HTTPRoutes(ns),
		&gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: spec}},
		func(r *gatewayv1.HTTPRoute) { r.Status.RouteStatus = status })
	hr.Spec.Hostnames = []gatewayv1.Hostname{"web.example"}
	_, err = gwSA.GatewayV1().HTTPRoutes(ns).Update(ctx, hr, metav1.UpdateOptions{})
	wantForbidden(t, "update the HTTPRoute's spec", err)
	got, err := gwAdmin.GatewayV1().HTTPRoutes(ns).Get(ctx, hr.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Parents) != 1 || got.Status.Parents[0].ControllerName != "meshd.io/mesh-controller" || len(got.Spec.Hostnames) != 0 {
		t.Errorf("HTTPRoute after the service account's writes: status %+v, hostnames %v; want its status written, its spec not",
			got.Status.Parents, got.Spec.Hostnames)
	}

	gr := writeStatusAs(t, "GRPCRoute", gwAdmin.GatewayV1().GRPCRoutes(ns), gwSA.GatewayV1().GRPCRoutes(ns),
		&gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Name: "grpc"}, Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: spec}},
		func(r *gatewayv1.GRPCRoute) { r.Status.RouteStatus = status })
	wantForbidden(t, "delete the GRPCRoute", gwSA.GatewayV1().GRPCRoutes(ns).Delete(ctx, gr.Name, metav1.DeleteOptions{}))
}

// routeClient is the part of a typed Gateway API route client that
// writeStatusAs uses.
type routeClient[R any] interface {
	Create(ctx context.Context, route R, opts metav1.CreateOptions) (R, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (R, error)
	UpdateStatus(ctx context.Context, route R, opts metav1.UpdateOptions) (R, error)
}

// writeStatusAs creates route through admin, then reads it through sa,
// sets its status with setStatus and writes that through sa, which must
// succeed. It returns the route sa read, with the status set.
func writeStatusAs[R metav1.Object](t *testing.T, kind string, admin, sa routeClient[R], route R, setStatus func(R)) R {
	t.Helper()
	ctx := t.Context()
	created, err := admin.Create(ctx, route, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sa.Get(ctx, created.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the %s: %v", kind, err)
	}
	setStatus(got)
	_, err = sa.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	wantOK(t, "update the "+kind+"'s status", err)
	return got
}

// TestInformersAsServiceAccount runs meshd's Kubernetes source as the
// service account, with the watches the Deployment's flags give it: every
// informer lists and watches without an error, and the mesh config's
// ConfigMap, granted by name alone, reaches it. A service account without
// the roles, as a control, fails to.
func TestInformersAsServiceAccount(t *testing.T) {
	env := deployed(t)
	waitAuthorized(t, env)
	opts := app.KubeOptions(deploymentConfig(t))
	createMeshConfigMap(t, env)

	run := func(user string, done func(ctx context.Context, src *kube.Source) error) {
		t.Helper()
		runSourceAs(t, env, user, opts, done)
	}

	run(saUser, func(ctx context.Context, src *kube.Source) error {
		in := src.Inputs()
		if err := in.WaitSynced(ctx); err != nil {
			return fmt.Errorf("not synced: %w; stats %+v", err, src.Stats())
		}
		if got := in.ConfigMaps.List(); len(got) != 1 || sources.Key(got[0]) != saNamespace+"/meshd" {
			return fmt.Errorf("ConfigMaps %v, want the mesh config's alone", got)
		}
		stats := src.Stats()
		if len(stats) != 10 {
			return fmt.Errorf("%d informers, want 10: %+v", len(stats), stats)
		}
		for _, s := range stats {
			// Istio's CRDs are not installed here: their informers are
			// skipped, but must not fail.
			istio := strings.Contains(s.Resource, "security.istio.io")
			if (s.Skipped && !istio) || s.WatchErrors > 0 {
				return fmt.Errorf("%s: skipped %v, %d watch errors", s.Resource, s.Skipped, s.WatchErrors)
			}
		}
		return nil
	})

	refused := false
	run("system:serviceaccount:"+saNamespace+":nobody", func(ctx context.Context, src *kube.Source) error {
		for ctx.Err() == nil {
			for _, s := range src.Stats() {
				if strings.HasSuffix(s.Resource, "=services") && s.WatchErrors > 0 && !s.Synced {
					refused = true
					return nil
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
	if !refused {
		t.Error("a service account without meshd's roles listed services: the check above proves nothing")
	}
}
