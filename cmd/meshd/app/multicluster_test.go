package app

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/collections"
	"github.com/meshd/meshd/internal/xdsclients"
	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/sources/multicluster"
)

// The pods of the echo service: one in the local cluster, one in the
// remote (one flat network: both are loopback addresses of this host).
const (
	localEchoIP  = "127.0.0.31"
	remoteEchoIP = "127.0.0.32"
	mcNamespace  = "mc-echo"
	mcTarget     = "xds:///echo." + mcNamespace + ".svc.cluster.local:7000"
)

// TestMulticlusterEndToEnd runs meshd on a local kube-apiserver with a
// remote one joined through a Secret, and a grpc-go proxyless client:
// the remote's endpoints come and go with the Secret, preferLocal fails
// over to the remote only when the local pod is gone, and a remote whose
// API server stops keeps its endpoints (stale) until the stale timeout,
// while local traffic goes on.
func TestMulticlusterEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	m := startMulticluster(t, ctx)
	client, local := m.client, m.local
	both := m.both
	onlyLocal, onlyRemote := both[:1], both[1:]
	waitBackends(t, client, "the local backend alone", onlyLocal)

	secrets := local.CoreV1().Secrets("meshd-system")
	if _, err := secrets.Create(ctx, remoteSecret(t, m.west.Kubeconfig), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, client, "both clusters' backends once the Secret is added", both)
	waitCluster(t, m.r, "west", multicluster.StateSynced)
	var clusters debugui.ClustersResult
	m.r.getJSON(t, "/debug/api/clusters", &clusters)
	if clusters.Local != "home" {
		t.Errorf("api/clusters names the local cluster %q, want home (--cluster-name)", clusters.Local)
	}
	waitEndpoints(t, m.r, "the endpoints in their clusters, none stale", map[string]string{localEchoIP: "home", remoteEchoIP: "west"})

	writeFile(t, m.meshFile, "clusterTraffic: preferLocal\n")
	waitBackends(t, client, "the local backend alone under preferLocal", onlyLocal)
	if err := local.CoreV1().Pods(mcNamespace).Delete(ctx, "echo-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, client, "failover to the remote once the local pod is gone", onlyRemote)
	createPod(t, ctx, local, localEchoIP)
	waitBackends(t, client, "back to the local pod", onlyLocal)
	writeFile(t, m.meshFile, "clusterTraffic: spread\n")
	waitBackends(t, client, "both again under spread", both)

	if err := secrets.Delete(ctx, "remote-west", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, client, "the local backend alone once the Secret is deleted", onlyLocal)
	if _, err := secrets.Create(ctx, remoteSecret(t, m.west.Kubeconfig), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, client, "both once the Secret is back", both)

	m.west.Stop()
	waitCluster(t, m.r, "west", multicluster.StateStale)
	waitEndpoints(t, m.r, "the remote's endpoint flagged stale", map[string]string{localEchoIP: "home", remoteEchoIP: "west stale"})
	checkBackends(t, client, "both while the remote is stale", both)
	waitCluster(t, m.r, "west", multicluster.StateExpired)
	waitBackends(t, client, "the local backend alone after the stale timeout", onlyLocal)
}

// mcRig is meshd on a local cluster, with --remote-secrets, the remote
// cluster west, and a grpc-go client of the echo service.
type mcRig struct {
	r        *running
	client   xdsclients.Client
	local    kubernetes.Interface
	west     *kubetest.Env
	meshFile string
	both     []string // the local and the remote backend's address
}

// startMulticluster starts two API servers, each with the echo service
// and one pod, and meshd on the first.
func startMulticluster(t *testing.T, ctx context.Context) *mcRig {
	t.Helper()
	b := xdsclients.StartBackends(t, localEchoIP, remoteEchoIP)
	localEnv, local := startKube(t, ctx)
	westEnv, west := startKube(t, ctx)
	createEcho(t, ctx, local, b.Port, localEchoIP)
	createEcho(t, ctx, west, b.Port, remoteEchoIP)
	createNamespace(t, ctx, local, "meshd-system")
	meshFile := filepath.Join(t.TempDir(), "mesh.yaml")
	writeFile(t, meshFile, "clusterTraffic: spread\n")
	r, client := startMeshd(t, "mc-client", "--kubeconfig", localEnv.Kubeconfig, "--cluster-name", "home",
		"--remote-secrets", "--remote-secrets-namespace", "meshd-system",
		"--remote-stale-timeout", "4s", "--remote-stale-grace", "1s", "--mesh-config", meshFile)
	return &mcRig{r: r, client: client, local: local, west: westEnv, meshFile: meshFile,
		both: []string{b.Addr(localEchoIP), b.Addr(remoteEchoIP)}}
}

// startMeshd starts meshd with flags, on loopback ports with a short push
// debounce and no status writes, waits until it is ready, and connects a
// grpc-go client as node.
func startMeshd(t *testing.T, node string, flags ...string) (*running, xdsclients.Client) {
	t.Helper()
	cfg, err := ParseFlags(append(flags, "--write-status=false",
		"--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0", "--push-debounce", "10ms"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	return r, xdsclients.Implementations()[0].Start(t, xdsclients.Bootstrap(r.app.XDSAddr(), node, nil))
}

// remoteSecret is the Secret naming cluster west.
func remoteSecret(t *testing.T, kubeconfig string) *corev1.Secret {
	t.Helper()
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "remote-west", Namespace: "meshd-system",
			Labels: map[string]string{multicluster.LabelSecret: "true"}},
		Data: map[string][]byte{"west": b},
	}
}

func createNamespace(t *testing.T, ctx context.Context, c kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createEcho creates the echo Service and its pod at ip.
func createEcho(t *testing.T, ctx context.Context, c kubernetes.Interface, port int, ip string) {
	t.Helper()
	createNamespace(t, ctx, c, mcNamespace)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: mcNamespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"},
			Ports: []corev1.ServicePort{{Name: "grpc", Port: 7000, TargetPort: intstr.FromInt32(int32(port))}}}}
	if _, err := c.CoreV1().Services(mcNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, ctx, c, ip)
}

// createPod creates the ready pod echo-0 at ip.
func createPod(t *testing.T, ctx context.Context, c kubernetes.Interface, ip string) {
	t.Helper()
	pods := c.CoreV1().Pods(mcNamespace)
	pod, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "echo-0", Namespace: mcNamespace, Labels: map[string]string{"app": "echo"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "echo", Image: "echo"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// backends makes 20 calls and returns the distinct backends that
// answered, sorted, and the first failure's message.
func backends(t *testing.T, c xdsclients.Client) ([]string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Call(ctx, xdsclients.Call{Target: mcTarget, Method: "/echo.Echo/" + xdsclients.MethodEcho, Count: 20, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	failed := ""
	for _, r := range res {
		if r.Code != 0 {
			failed = fmt.Sprintf("code %d: %s", r.Code, r.Message)
			continue
		}
		if !slices.Contains(got, r.Backend) {
			got = append(got, r.Backend)
		}
	}
	slices.Sort(got)
	return got, failed
}

// waitBackends polls until 20 calls succeed and reach exactly want.
func waitBackends(t *testing.T, c xdsclients.Client, what string, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, failed := backends(t, c)
		if failed == "" && slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: backends %v (failure: %q), want %v", what, got, failed, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkBackends fails unless 20 calls succeed and reach exactly want.
func checkBackends(t *testing.T, c xdsclients.Client, what string, want []string) {
	t.Helper()
	if got, failed := backends(t, c); failed != "" || !slices.Equal(got, want) {
		t.Errorf("%s: backends %v (failure: %q), want %v", what, got, failed, want)
	}
}

// waitEndpoints polls the echo port's endpoints in the debug API until
// they are want: by IP, the endpoint's cluster, then " stale" if flagged.
func waitEndpoints(t *testing.T, r *running, what string, want map[string]string) {
	t.Helper()
	path := "/debug/api/collections/Endpoints/items?prefix=" + url.QueryEscape(collections.ClusterName(7000, "echo."+mcNamespace+".svc.cluster.local"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		var page debugui.ItemsPage
		r.getJSON(t, path, &page)
		got := map[string]string{}
		for _, it := range page.Items {
			var eps collections.ServiceEndpoints
			if err := json.Unmarshal(it.Value, &eps); err != nil {
				t.Fatalf("endpoints item %s: %v", it.Key, err)
			}
			for _, e := range eps.Endpoints {
				got[e.IP] = e.Locality.Cluster + map[bool]string{true: " stale"}[e.Stale]
			}
		}
		if maps.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: endpoints %v, want %v", what, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitCluster polls /debug/api/clusters until cluster is in state.
func waitCluster(t *testing.T, r *running, cluster string, state multicluster.State) multicluster.ClusterStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res debugui.ClustersResult
		r.getJSON(t, "/debug/api/clusters", &res)
		for _, c := range res.Clusters {
			if c.Name == cluster && c.State == state {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s not %s within 30s: %+v", cluster, state, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
