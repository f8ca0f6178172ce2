package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/meshd/meshd/deploy"
)

// TestExampleSidecarArgs parses the agent's command line of the example
// Deployment in deploy/examples/ca as meshd agent would.
func TestExampleSidecarArgs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "examples", "ca", "20-app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"POD_NAMESPACE", "SERVICE_ACCOUNT", "POD_NAME", "POD_IP"} {
		t.Setenv(env, strings.ToLower(env))
	}
	agents := 0
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			if len(c.Args) == 0 || c.Args[0] != "agent" {
				t.Fatalf("init container %s does not run meshd agent", c.Name)
			}
			f, err := parseAgentFlags(c.Args[1:], nil)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if f.cfg.Namespace != "pod_namespace" || f.cfg.CAAddr != f.cfg.XDSAddr || f.rootCert == "" {
				t.Errorf("%s: namespace %q, CA %q, root %q: want the CA reached over TLS", c.Name, f.cfg.Namespace, f.cfg.CAAddr, f.rootCert)
			}
			agents++
		}
	}
	if agents != 2 {
		t.Errorf("%d agent containers, want the --once init container and the sidecar", agents)
	}
}

func TestAgentFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "a", "--service-account", "b"}, "--out is required"},
		{[]string{"--out", "d", "--namespace", "", "--service-account", ""}, "--namespace and --service-account"},
		{[]string{"--out", "d", "--namespace", "a", "--service-account", "b", "extra"}, "unexpected argument"},
	} {
		if _, err := parseAgentFlags(tc.args, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseAgentFlags(%q): %v, want %q", tc.args, err, tc.want)
		}
	}
}
