package app

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/klog/v2"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/xds/xdstest"
)

// The markers are unique strings that stand for secrets: none may appear
// in the log or anywhere the debug server answers.
const (
	secretDataMarker   = "sEcReT-data-4b1d9e"    // a Secret's data, base64-encoded in the manifest
	secretStringMarker = "sEcReT-string-77c2a0"  // a Secret's stringData
	appliedMarker      = "sEcReT-applied-e5f310" // in the last-applied annotation
	brokenSecretMarker = "sEcReT-broken-0a9c44"  // in a Secret whose file does not parse
	envMarker          = "sEcReT-env-91ad2b"     // a Pod's env var DB_PASSWORD
	nodeTokenMarker    = "sEcReT-node-token-3f8e"
	nodeNestedMarker   = "sEcReT-node-nested-c41b"
	nodeBearerMarker   = "sEcReTnodebearer5d20aa"
	nodeJWT            = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzRWNSZVQifQ.c0VjUmVULWp3dC1zaWc"
)

const secretManifest = `apiVersion: v1
kind: Secret
metadata:
  name: app-creds
  namespace: shop
  annotations:
    team: payments
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"password":"` + appliedMarker + `"}}'
type: Opaque
data:
  token: %s
stringData:
  password: ` + secretStringMarker + `
`

const podWithEnv = `apiVersion: v1
kind: Pod
metadata:
  name: billing-1
  namespace: shop
  labels:
    app: billing
spec:
  containers:
  - name: billing
    image: example.com/billing:1
    env:
    - name: DB_PASSWORD
      value: ` + envMarker + `
    - name: LOG_LEVEL
      value: verbose-logging
status:
  phase: Running
  podIP: 10.1.9.9
`

// pemSecrets returns what of a PEM key must never show: the block itself
// and each line of its base64 body.
func pemSecrets(keyPEM []byte) []string {
	out := []string{strings.TrimSpace(string(keyPEM))}
	for _, l := range strings.Split(string(keyPEM), "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// crawl fetches everything the debug server serves: health, metrics,
// pprof's text pages, the UI's assets, and every debug API for every
// collection, item (explained), proxy (config dump) and problem, plus the
// first events of the event stream. It returns the bodies by path.
func crawl(t *testing.T, r *running) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	fetch := func(path string) string {
		t.Helper()
		code, body := r.get(t, path)
		if code >= 500 && path != "/readyz" { // 503 is /readyz's "not ready"
			t.Errorf("GET %s = %d %s", path, code, body)
		}
		bodies[path] = body
		return body
	}
	for _, p := range []string{
		"/healthz", "/readyz", "/metrics",
		"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=2",
		"/debug/ui", "/debug/ui/main.js",
		"/debug/api/problems",
	} {
		fetch(p)
	}
	var graph debugui.GraphSummary
	if err := json.Unmarshal([]byte(fetch("/debug/api/graph")), &graph); err != nil {
		t.Fatalf("graph: %v", err)
	}
	for _, c := range graph.Collections {
		fetch(collectionPath(c.Name))
		var page debugui.ItemsPage
		if err := json.Unmarshal([]byte(fetch(collectionPath(c.Name)+"/items?limit=1000")), &page); err != nil {
			t.Fatalf("items of %s: %v", c.Name, err)
		}
		for _, it := range page.Items {
			fetch("/debug/api/explain?key=" + url.QueryEscape(it.Key) + "&collection=" + url.QueryEscape(c.Name))
		}
		if len(page.Items) > 0 {
			// Without a collection, explain looks through all of them.
			fetch("/debug/api/explain?key=" + url.QueryEscape(page.Items[0].Key))
		}
	}
	var proxies debugui.ProxiesResult
	if err := json.Unmarshal([]byte(fetch("/debug/api/proxies")), &proxies); err != nil {
		t.Fatalf("proxies: %v", err)
	}
	for _, p := range proxies.Proxies {
		fetch("/debug/api/proxies/" + url.PathEscape(p.NodeID) + "/config")
	}
	bodies["/debug/api/stream"] = readStream(t, r.base+"/debug/api/stream", "graph", "problems", "proxies")
	return bodies
}

// readStream reads the event stream at u until it has seen each of the
// events, or 10s passed, and returns what it read.
func readStream(t *testing.T, u string, events ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	seen := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 8*1024*1024)
	for len(seen) < len(events) && sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if ev, ok := strings.CutPrefix(line, "event: "); ok && slices.Contains(events, ev) {
			seen[ev] = true
		}
	}
	if len(seen) < len(events) {
		t.Errorf("event stream: saw %v of %v", seen, events)
	}
	return b.String()
}

// assertNoSecrets fails for every secret found in the log or a body.
func assertNoSecrets(t *testing.T, log string, bodies map[string]string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the log shows secret %q", s)
		}
		for path, body := range bodies {
			if strings.Contains(body, s) {
				i := strings.Index(body, s)
				t.Errorf("GET %s shows secret %q: …%s…", path, s, body[max(0, i-120):min(len(body), i+len(s)+40)])
			}
		}
	}
}

// assertShown fails unless each want is in the body of its path: the
// crawl saw the data it was meant to check.
func assertShown(t *testing.T, bodies map[string]string, path string, wants ...string) {
	t.Helper()
	body, ok := bodies[path]
	if !ok {
		t.Errorf("%s was not fetched", path)
		return
	}
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s lacks %q (the test would be vacuous); body: %.600s", path, w, body)
		}
	}
}

// TestNoSecretsLeak runs meshd with TLS on xDS, a manifest folder holding
// a Secret and a Pod with a password in its env, and a proxy whose node
// metadata carries credentials; then it reads the whole log and every
// page of the debug server and finds none of them, while the data next to
// them is shown.
func TestNoSecretsLeak(t *testing.T) {
	dir := copyDemo(t)
	ca := xdstest.NewCA(t)
	certFile, keyFile := xdstest.WriteKeyPair(t, t.TempDir(), "server", ca.Server(t))
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	secretYAML := fmt.Sprintf(secretManifest, base64.StdEncoding.EncodeToString([]byte(secretDataMarker)))
	writeFile(t, filepath.Join(dir, "secret.yaml"), secretYAML)
	writeFile(t, filepath.Join(dir, "billing.yaml"), podWithEnv)
	cfg, err := ParseFlags([]string{"--config-dir", dir, "--xds-addr", "127.0.0.1:0", "--debug-addr", "127.0.0.1:0",
		"--push-debounce", "10ms", "--xds-tls-cert", certFile, "--xds-tls-key", keyFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	r.waitReady(t)
	connectCredentialedProxy(t, r, ca)

	// A Secret that does not parse is reported, without its content.
	writeFile(t, filepath.Join(dir, "broken-secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\n  namespace: shop\nstringData:\n  token: "+
		brokenSecretMarker+"\n  other: [unclosed\n")
	r.waitProblem(t, "the broken Secret's problem", "broken-secret.yaml")

	bodies := crawlAndStop(t, r)
	log := r.log.String()
	secrets := []string{
		secretDataMarker, base64.StdEncoding.EncodeToString([]byte(secretDataMarker)),
		secretStringMarker, appliedMarker, brokenSecretMarker, envMarker,
		nodeTokenMarker, nodeNestedMarker, nodeBearerMarker, nodeJWT,
	}
	secrets = append(secrets, pemSecrets(keyPEM)...)
	assertNoSecrets(t, log, bodies, secrets)

	// Not vacuous: the crawl reached the Secret, the Pod and the proxy,
	// and shows what is no secret around them.
	assertShown(t, bodies, collectionPath("folder/unstructured")+"/items?limit=1000",
		`"name":"app-creds"`, `"token":"[redacted]"`, `"password":"[redacted]"`, `"team":"payments"`, `"type":"Opaque"`)
	// A Pod is kept as its PodInfo, without env: its name shows, no env var.
	assertShown(t, bodies, collectionPath("folder/Pod")+"/items?limit=1000", "billing-1")
	assertShown(t, bodies, "/debug/api/proxies",
		credentialedNode, `"NAMESPACE":"shop"`, `eu-west-3`, `"ISTIO_META_AUTH_TOKEN":"[redacted]"`, `Bearer [redacted]`)
	assertShown(t, bodies, "/debug/api/proxies/"+url.PathEscape(credentialedNode)+"/config", reviewsCluster)
	assertShown(t, bodies, "/debug/api/problems", "secret.yaml", "broken-secret.yaml")
	assertShown(t, bodies, "/debug/api/stream", "event: proxies", credentialedNode)
	assertShown(t, bodies, "/metrics", "meshd_xds_connected_proxies 1")
	for _, want := range []string{"meshd serving", "broken-secret.yaml", "secret.yaml"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// credentialedNode is the node ID of the proxy whose metadata carries
// credentials.
const credentialedNode = "sidecar~10.1.9.9~billing-1.shop~shop.svc.cluster.local"

// connectCredentialedProxy connects, over TLS trusting ca, a proxy whose
// node metadata carries the node markers, and waits until it has ACKed
// the clusters.
func connectCredentialedProxy(t *testing.T, r *running, ca *xdstest.CA) {
	t.Helper()
	md, err := structpb.NewStruct(map[string]any{
		"NAMESPACE":             "shop",
		"ISTIO_META_AUTH_TOKEN": nodeTokenMarker,
		"PROXY_CONFIG":          map[string]any{"region": "eu-west-3", "upstream": map[string]any{"password": nodeNestedMarker}},
		"BOOTSTRAP_HINT":        "Authorization: Bearer " + nodeBearerMarker,
		"ISSUED":                nodeJWT,
	})
	if err != nil {
		t.Fatal(err)
	}
	ads := dialADS(t, r.app.XDSAddr(), credentials.NewTLS(&tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}),
		&corev3.Node{Id: credentialedNode, Metadata: md}, true)
	resp := ads.Recv()
	if names := clusterNames(t, resp); !slices.Contains(names, reviewsCluster) {
		t.Fatalf("clusters over TLS = %v, want %s", names, reviewsCluster)
	}
	ads.Ack(resp)
	r.proxy(t, credentialedNode, "acked", func(p debugui.ProxyEntry) bool { return p.Verdict == "up-to-date" })
}

// crawlAndStop crawls the debug server, then stops meshd, and returns the
// bodies crawled.
func crawlAndStop(t *testing.T, r *running) map[string]string {
	t.Helper()
	bodies := crawl(t, r)
	if err := r.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return bodies
}

// TestNoKubeTokenLeak points meshd at an API server that records the
// credentials it is sent and refuses them: the kubeconfig's token reaches
// the server, and neither meshd's log, client-go's (klog) nor any page of
// the debug server shows it.
func TestNoKubeTokenLeak(t *testing.T) {
	const token = "sEcReT-kube-token-8d2c61"
	apiURL, sent := refusingAPIServer(t)
	klogs := captureKlog(t)

	cfg := DefaultConfig()
	cfg.Kubeconfig = writeKubeconfig(t, apiURL, token)
	cfg.XDSAddr, cfg.DebugAddr = "127.0.0.1:0", "127.0.0.1:0"
	r := start(t, cfg)
	waitFor(t, "the API server to see the token", func() (string, bool) {
		auth := sent()
		return strings.Join(auth, ","), slices.Contains(auth, "Bearer "+token)
	})
	r.waitProblem(t, "the refused cluster in the problems", "kubernetes")

	bodies := crawlAndStop(t, r)
	klog.Flush()
	assertNoSecrets(t, r.log.String()+klogs.String(), bodies, []string{token})
	assertShown(t, bodies, "/readyz", "source kubernetes", strings.TrimPrefix(apiURL, "https://"))
	assertShown(t, bodies, "/debug/api/problems", `"source":"kubernetes"`)
	if !strings.Contains(r.log.String(), "Unauthorized") {
		t.Errorf("meshd's log does not say the cluster refused it:\n%s", r.log)
	}
}

// refusingAPIServer starts, on loopback with TLS, an API server that
// refuses every request as Unauthorized. It returns its URL and a func
// that returns the Authorization headers it was sent so far.
func refusingAPIServer(t *testing.T) (string, func() []string) {
	t.Helper()
	var (
		mu   sync.Mutex
		auth []string
	)
	api := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		auth = append(auth, req.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api.Listener = l
	api.StartTLS()
	t.Cleanup(api.Close)
	return api.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(auth)
	}
}

// captureKlog captures what client-go logs through klog, to stderr (the
// kube source handles watch errors itself, so it usually stays silent),
// until the test ends. Called before start, its cleanup runs after the
// App stopped.
func captureKlog(t *testing.T) *testrun.Buffer {
	t.Helper()
	klogs := &testrun.Buffer{}
	klog.LogToStderr(false)
	klog.SetOutput(klogs)
	t.Cleanup(func() {
		klog.Flush()
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	})
	return klogs
}

// writeKubeconfig writes a kubeconfig for the cluster at server (TLS
// unverified) with a bearer token, and returns its path.
func writeKubeconfig(t *testing.T, server, token string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: meshd
  user:
    token: %s
contexts:
- name: test
  context: {cluster: test, user: meshd}
current-context: test
`, server, token)
	if err := os.WriteFile(kc, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}
