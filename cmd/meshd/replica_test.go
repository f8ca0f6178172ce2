package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshd/meshd/internal/testrun"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/sources/kube/kubetest"
	"github.com/meshd/meshd/xds"
)

// apiServer is the package's API server, started by the first test that
// needs it, with RBAC on and the Gateway API CRDs and deploy/ applied.
var apiServer = kubetest.NewShared(func(ctx context.Context, e *kubetest.Env) error {
	if err := kubetest.InstallGatewayCRDs(ctx, e.Config); err != nil {
		return err
	}
	if err := deploy.Apply(ctx, e.Config); err != nil {
		return fmt.Errorf("applying deploy/: %w", err)
	}
	return nil
}, kubetest.WithAuthorization("RBAC"))

// kubeEnv returns the API server, or skips t when it cannot run here.
func kubeEnv(t *testing.T) *kubetest.Env { return apiServer.Env(t) }

// fleetLease is the replicas' lease timing: short, so takeover is quick.
var fleetLease = []string{"--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "250ms"}

// replica is one meshd process of the fleet.
type replica struct {
	args       []string
	cmd        *exec.Cmd
	xds, debug string
	logs       *testrun.Buffer
	exited     chan error
	dead       bool
}

// startReplica starts meshd on the cluster of kubeconfig with
// --leader-elect, fleetLease and extra flags.
func startReplica(t *testing.T, kubeconfig string, extra ...string) *replica {
	t.Helper()
	r := &replica{xds: freeAddr(t), debug: freeAddr(t), logs: &testrun.Buffer{}, exited: make(chan error, 1)}
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-elect",
		"--xds-addr", r.xds, "--debug-addr", r.debug, "--push-debounce", "10ms", "--log-format", "json"}, fleetLease...)
	r.args = append(args, extra...)
	r.start(t)
	t.Cleanup(func() {
		if !r.dead {
			r.cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.debug, r.logs.String())
		}
	})
	return r
}

func (r *replica) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command(bin, r.args...)
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.dead = false
	go func() { r.exited <- r.cmd.Wait() }()
}

// restart starts a stopped replica again, on the same addresses.
func (r *replica) restart(t *testing.T) {
	t.Helper()
	if !r.dead {
		t.Fatalf("replica %s restarted while running", r.debug)
	}
	r.start(t)
}

func (r *replica) waitReady(t *testing.T) {
	t.Helper()
	waitUntil(t, "replica "+r.debug+" ready", func() bool {
		code, _ := get("http://" + r.debug + "/readyz")
		return code == http.StatusOK
	})
}

// metric returns the value of one sample of /metrics, 0 when absent.
func (r *replica) metric(t *testing.T, sample string) float64 {
	t.Helper()
	_, body := get("http://" + r.debug + "/metrics")
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", sample, line, err)
			}
			return f
		}
	}
	return 0
}

// proxy returns the node's connected stream as the debug UI's JSON API
// shows it, nil if there is none.
func (r *replica) proxy(t *testing.T, node string) *debugui.ProxyStatus {
	t.Helper()
	code, body := get("http://" + r.debug + "/debug/api/proxies")
	if code != http.StatusOK {
		t.Fatalf("%s/debug/api/proxies = %d %s", r.debug, code, body)
	}
	var res debugui.ProxiesResult
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%s/debug/api/proxies: %v", r.debug, err)
	}
	for _, p := range res.Proxies {
		if p.NodeID == node && p.State == debugui.ProxyConnected {
			return &p.ProxyStatus
		}
	}
	return nil
}

func (r *replica) hasProxy(t *testing.T, node string) bool { return r.proxy(t, node) != nil }

func (r *replica) kill(t *testing.T) {
	t.Helper()
	r.cmd.Process.Kill()
	<-r.exited
	r.dead = true
}

func (r *replica) stop(t *testing.T) {
	t.Helper()
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		r.dead = true
		if err != nil {
			t.Errorf("replica %s after SIGTERM: %v", r.debug, err)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("replica %s still running 15s after SIGTERM", r.debug)
	}
}

// waitLeader waits until exactly one of rs says it leads, and returns it;
// not, if set, must not be it.
func waitLeader(t *testing.T, rs []*replica, not *replica) *replica {
	t.Helper()
	var leader *replica
	waitUntil(t, "exactly one leader", func() bool {
		leader = nil
		for _, r := range rs {
			if r.metric(t, "meshd_leader") == 1 {
				if leader != nil {
					t.Fatalf("replicas %s and %s both lead", leader.debug, r.debug)
				}
				leader = r
			}
		}
		return leader != nil && leader != not
	})
	return leader
}

// replica returns the debug UI's view of the replica's election.
func (r *replica) replica(t *testing.T) debugui.Replica {
	t.Helper()
	code, body := get("http://" + r.debug + "/debug/api/replica")
	var res debugui.ReplicaResult
	if err := json.Unmarshal([]byte(body), &res); code != http.StatusOK || err != nil || !res.Available || res.Replica == nil {
		t.Fatalf("%s/debug/api/replica = %d %s (%v)", r.debug, code, body, err)
	}
	return *res.Replica
}

func others(rs []*replica, not ...*replica) []*replica {
	var out []*replica
	for _, r := range rs {
		keep := true
		for _, n := range not {
			keep = keep && r != n
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if !testrun.Poll(30*time.Second, 50*time.Millisecond, ok) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// versions fetches every resource a replica serves over one Delta stream
// subscribed to everything, and returns "type name" → version.
func (r *replica) versions(t *testing.T) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cc, err := grpc.NewClient(r.xds, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(cc).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	types := []string{xds.ClusterType, xds.EndpointType, xds.ListenerType, xds.RouteType}
	for _, typ := range types {
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{
			Node: &corev3.Node{Id: "version-check"}, TypeUrl: typ, ResourceNamesSubscribe: []string{"*"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]string{}
	for answered := map[string]bool{}; len(answered) < len(types); {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("delta stream to %s: %v", r.xds, err)
		}
		answered[resp.TypeUrl] = true
		for _, res := range resp.Resources {
			out[resp.TypeUrl+" "+res.Name] = res.Version
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
