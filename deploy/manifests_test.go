package deploy_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/sources/multicluster"
)

// TestEveryFileEmbedded checks that every manifest in the folder is one
// that Files lists, and so one Apply applies: a .yml or .json file would
// be applied by kubectl but not by Apply.
func TestEveryFileEmbedded(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".yaml":
			onDisk = append(onDisk, e.Name())
		case ".yml", ".json":
			t.Errorf("%s: name it *.yaml, or deploy.FS leaves it out", e.Name())
		}
	}
	if got := deploy.Files(); !slices.Equal(got, onDisk) {
		t.Errorf("deploy.Files() = %v, want the folder's %v", got, onDisk)
	}
	for _, name := range deploy.Files() {
		data, err := deploy.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := deploy.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(objs) == 0 {
			t.Errorf("%s holds no object", name)
		}
	}
}

func TestDecode(t *testing.T) {
	objs, err := deploy.Decode([]byte(`# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: b}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"ConfigMap/a", "ServiceAccount/b"}; !slices.Equal(got, want) {
		t.Errorf("Decode = %v, want %v", got, want)
	}

	for name, doc := range map[string]string{
		"duplicate key":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n",
		"no kind":        "apiVersion: v1\nmetadata: {name: a}\n",
		"no apiVersion":  "kind: ConfigMap\nmetadata: {name: a}\n",
		"not an object":  "apiVersion: v1\nkind: [ConfigMap]\n",
		"broken yaml":    "apiVersion: v1\nkind: ConfigMap\n  metadata: {\n",
		"second doc bad": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\n",
	} {
		if objs, err := deploy.Decode([]byte(doc)); err == nil {
			t.Errorf("%s: Decode = %d objects, want an error", name, len(objs))
		}
	}
}

// manifests decodes every object strictly into its Go type: a field the
// type does not have, or one given twice, fails the test.
func manifests(t *testing.T) map[string]runtime.Object {
	t.Helper()
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	codec := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Strict: true})
	out := map[string]runtime.Object{}
	for _, u := range objs {
		data, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		typed, _, err := codec.Decode(data, nil, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		key := u.GetKind() + "/" + u.GetName()
		if _, dup := out[key]; dup {
			t.Fatalf("%s defined twice", key)
		}
		out[key] = typed
	}
	return out
}

// get returns the manifest of kind and name, as its Go type.
func get[T runtime.Object](t *testing.T, all map[string]runtime.Object, kind, name string) T {
	t.Helper()
	o, ok := all[kind+"/"+name].(T)
	if !ok {
		t.Fatalf("no %s %s among the manifests", kind, name)
	}
	return o
}

// TestManifestsAgree checks the manifests against each other and against
// meshd's own flag parser: the Deployment's arguments are valid, its ports
// are those meshd listens on, the Service, probes and NetworkPolicy name
// them, every selector selects the pods, the roles are bound to the
// service account the pods run as, and the Lease the Role allows is the
// one meshd elects through.
func TestManifestsAgree(t *testing.T) {
	all := manifests(t)
	checkManifestSet(t, all)
	ns := get[*corev1.Namespace](t, all, "Namespace", "meshd-system").Name

	dep := get[*appsv1.Deployment](t, all, "Deployment", "meshd")
	pod := dep.Spec.Template
	podLabels := labels.Set(pod.Labels)
	checkSelects(t, "Deployment", dep.Spec.Selector, podLabels)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", dep.Spec.Replicas)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]

	cfg, err := app.ParseFlags(c.Args, io.Discard)
	if err != nil {
		t.Fatalf("meshd rejects the Deployment's args %q: %v", c.Args, err)
	}
	if !cfg.InCluster || !cfg.LeaderElect || !cfg.WriteStatus || cfg.LogFormat != "json" {
		t.Errorf("args %q: in-cluster %v, leader-elect %v, write-status %v, log format %q; want all on, json",
			c.Args, cfg.InCluster, cfg.LeaderElect, cfg.WriteStatus, cfg.LogFormat)
	}
	if err := multicluster.ValidateName(cfg.ClusterName); cfg.ClusterName == "" || err != nil {
		t.Errorf("args %q: --cluster-name %q (%v), want the local cluster named", c.Args, cfg.ClusterName, err)
	}
	xdsPort := containerPort(t, c, "grpc-xds", cfg.XDSAddr)
	debugPort := containerPort(t, c, "http-debug", cfg.DebugAddr)
	checkProbes(t, c)
	checkLeaseRole(t, all, c, cfg)
	checkMeshConfigRole(t, all, cfg, ns)
	checkPodSecurity(t, pod)
	checkService(t, all, podLabels, xdsPort)
	checkNetworkPolicy(t, all, podLabels, xdsPort, debugPort)

	pdb := get[*policyv1.PodDisruptionBudget](t, all, "PodDisruptionBudget", "meshd")
	checkSelects(t, "PodDisruptionBudget", pdb.Spec.Selector, podLabels)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget minAvailable %v, want 1", pdb.Spec.MinAvailable)
	}
	checkBindings(t, all, pod.Spec.ServiceAccountName)
}

// checkManifestSet checks that the manifests are exactly meshd's objects,
// each labelled as meshd's and, unless cluster-scoped, in its namespace.
func checkManifestSet(t *testing.T, all map[string]runtime.Object) {
	t.Helper()
	var keys []string
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{
		"ClusterRole/meshd", "ClusterRole/meshd-remote-reader", "ClusterRoleBinding/meshd", "Deployment/meshd",
		"Namespace/meshd-system", "NetworkPolicy/meshd", "PodDisruptionBudget/meshd",
		"Role/meshd-leader-election", "Role/meshd-mesh-config",
		"RoleBinding/meshd-leader-election", "RoleBinding/meshd-mesh-config",
		"Service/meshd", "ServiceAccount/meshd",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("manifests = %v, want %v", keys, want)
	}
	ns := get[*corev1.Namespace](t, all, "Namespace", "meshd-system").Name
	for key, o := range all {
		m, err := apimeta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		if m.GetLabels()["app.kubernetes.io/name"] != "meshd" {
			t.Errorf("%s: no label app.kubernetes.io/name=meshd", key)
		}
		clusterScoped := strings.HasPrefix(key, "Namespace/") || strings.HasPrefix(key, "Cluster")
		if !clusterScoped && m.GetNamespace() != ns {
			t.Errorf("%s: namespace %q, want %q", key, m.GetNamespace(), ns)
		}
	}
}

// checkSelects fails t unless sel, the selector of what, selects pods
// labelled podLabels.
func checkSelects(t *testing.T, what string, sel *metav1.LabelSelector, podLabels labels.Set) {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() || !s.Matches(podLabels) {
		t.Errorf("%s selector %v does not select the pods (%v): %v", what, sel, podLabels, err)
	}
}

// checkProbes checks that the container's readiness and liveness probes
// ask meshd's debug port for its health pages.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", p.what)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || g.Port.String() != "http-debug" {
			t.Errorf("%s probe GET %s on %s, want %s on http-debug", p.what, g.Path, g.Port.String(), p.path)
		}
	}
}

// checkLeaseRole checks that the Lease is meshd's default name, in the
// pod's namespace (no --leader-elect-resource-namespace), which
// POD_NAMESPACE carries, and that the Role allows it.
func checkLeaseRole(t *testing.T, all map[string]runtime.Object, c corev1.Container, cfg app.Config) {
	t.Helper()
	if cfg.LeaseNamespace != "" {
		t.Errorf("args set the Lease namespace %q; the Role allows the pod's", cfg.LeaseNamespace)
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAMESPACE" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("env %v: want POD_NAMESPACE from metadata.namespace", c.Env)
	}
	role := get[*rbacv1.Role](t, all, "Role", "meshd-leader-election")
	if !allows(role.Rules, "coordination.k8s.io", "leases", "get", cfg.LeaseName) ||
		!allows(role.Rules, "coordination.k8s.io", "leases", "update", cfg.LeaseName) ||
		!allows(role.Rules, "coordination.k8s.io", "leases", "create", "") {
		t.Errorf("Role rules %v do not allow the Lease %s (create, get, update)", role.Rules, cfg.LeaseName)
	}
}

// checkPodSecurity checks the pod for what the restricted Pod Security
// level asks and more: resource requests and a spread over nodes.
func checkPodSecurity(t *testing.T, pod corev1.PodTemplateSpec) {
	t.Helper()
	c := pod.Spec.Containers[0]
	psc, sc := pod.Spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and the RuntimeDefault seccomp profile", psc)
	}
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext %+v: want no privilege escalation, a read-only root, every capability dropped", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v: want cpu and memory", c.Resources.Requests)
	}
	podLabels := labels.Set(pod.Labels)
	spread := slices.ContainsFunc(pod.Spec.TopologySpreadConstraints, func(s corev1.TopologySpreadConstraint) bool {
		sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
		return s.TopologyKey == "kubernetes.io/hostname" && s.MaxSkew == 1 && err == nil && !sel.Empty() && sel.Matches(podLabels)
	})
	if !spread {
		t.Errorf("topology spread %+v: want the pods spread over nodes", pod.Spec.TopologySpreadConstraints)
	}
}

// checkService checks that the Service selects the pods and serves their
// xDS port.
func checkService(t *testing.T, all map[string]runtime.Object, podLabels labels.Set, xdsPort int) {
	t.Helper()
	svc := get[*corev1.Service](t, all, "Service", "meshd")
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 {
		t.Fatalf("Service %+v: want ClusterIP with one port", svc.Spec)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the pods", svc.Spec.Selector)
	}
	if p := svc.Spec.Ports[0]; p.Name != "grpc-xds" || p.Port != int32(xdsPort) || p.TargetPort.String() != "grpc-xds" ||
		p.AppProtocol == nil || *p.AppProtocol != "grpc" {
		t.Errorf("Service port %+v: want grpc-xds %d to the container's grpc-xds, appProtocol grpc", p, xdsPort)
	}
}

// checkNetworkPolicy checks that the NetworkPolicy selects the pods and
// admits the xDS port alone, not the debug port.
func checkNetworkPolicy(t *testing.T, all map[string]runtime.Object, podLabels labels.Set, xdsPort, debugPort int) {
	t.Helper()
	np := get[*networkingv1.NetworkPolicy](t, all, "NetworkPolicy", "meshd")
	checkSelects(t, "NetworkPolicy", &np.Spec.PodSelector, podLabels)
	var open []int
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if p.Port == nil {
				t.Errorf("NetworkPolicy ingress rule %+v opens every port", r)
				continue
			}
			open = append(open, p.Port.IntValue())
		}
		if len(r.Ports) == 0 {
			t.Errorf("NetworkPolicy ingress rule %+v opens every port", r)
		}
	}
	if !slices.Equal(open, []int{xdsPort}) || slices.Contains(open, debugPort) {
		t.Errorf("NetworkPolicy admits ports %v, want the xDS port %d only", open, xdsPort)
	}
}

// checkBindings checks that the pods run as the ServiceAccount and that
// every role is bound to it.
func checkBindings(t *testing.T, all map[string]runtime.Object, podServiceAccount string) {
	t.Helper()
	sa := get[*corev1.ServiceAccount](t, all, "ServiceAccount", "meshd")
	if podServiceAccount != sa.Name {
		t.Errorf("pods run as %q, want the service account %s", podServiceAccount, sa.Name)
	}
	subject := rbacv1.Subject{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}
	crb := get[*rbacv1.ClusterRoleBinding](t, all, "ClusterRoleBinding", "meshd")
	get[*rbacv1.ClusterRole](t, all, crb.RoleRef.Kind, crb.RoleRef.Name)
	if !slices.Equal(crb.Subjects, []rbacv1.Subject{subject}) {
		t.Errorf("ClusterRoleBinding subjects %v, want %v", crb.Subjects, subject)
	}
	for _, name := range []string{"meshd-leader-election", "meshd-mesh-config"} {
		rb := get[*rbacv1.RoleBinding](t, all, "RoleBinding", name)
		if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != name || !slices.Equal(rb.Subjects, []rbacv1.Subject{subject}) {
			t.Errorf("RoleBinding %v to %v, want Role %s to %v", rb.RoleRef, rb.Subjects, name, subject)
		}
	}
}

// checkMeshConfigRole checks that the Role meshd-mesh-config grants the
// list and watch of the ConfigMap --mesh-config-map names, in its
// namespace, and nothing more; and that no ClusterRole grants ConfigMaps.
func checkMeshConfigRole(t *testing.T, all map[string]runtime.Object, cfg app.Config, ns string) {
	t.Helper()
	cmNamespace, cmName, ok := strings.Cut(cfg.MeshConfigMap, "/")
	if !ok || cmNamespace != ns {
		t.Fatalf("--mesh-config-map %q: want a ConfigMap in %s, where the Role is", cfg.MeshConfigMap, ns)
	}
	role := get[*rbacv1.Role](t, all, "Role", "meshd-mesh-config")
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
		ResourceNames: []string{cmName}, Verbs: []string{"list", "watch"}}}
	if !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("Role meshd-mesh-config rules %+v, want %+v", role.Rules, want)
	}
	cr := get[*rbacv1.ClusterRole](t, all, "ClusterRole", "meshd")
	if allows(cr.Rules, "", "configmaps", "list", "") || allows(cr.Rules, "", "configmaps", "watch", cmName) {
		t.Errorf("ClusterRole meshd grants ConfigMaps: %+v", cr.Rules)
	}
}

// containerPort returns the port of addr, which must be on every address
// (reachable from the pod's IP) and be the container's port named name.
func containerPort(t *testing.T, c corev1.Container, name, addr string) int {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("meshd listens on %s, which the pod's IP does not reach", addr)
	}
	n, _ := strconv.Atoi(port)
	i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == name })
	if i < 0 || int(c.Ports[i].ContainerPort) != n {
		t.Errorf("container ports %v: want %s on %d, where meshd listens (%s)", c.Ports, name, n, addr)
	}
	return n
}

// allows reports whether rules grant verb on group/resource (and name,
// when set), by the rules' own matching.
func allows(rules []rbacv1.PolicyRule, group, resource, verb, name string) bool {
	in := func(list []string, s string) bool { return slices.Contains(list, s) || slices.Contains(list, "*") }
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return in(r.APIGroups, group) && in(r.Resources, resource) && in(r.Verbs, verb) &&
			(len(r.ResourceNames) == 0 || (name != "" && slices.Contains(r.ResourceNames, name)))
	})
}
