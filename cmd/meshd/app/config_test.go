package app

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/xds"
)

// parseFlagsCases are flags and what they must parse into.
var parseFlagsCases = []struct {
	name  string
	args  []string
	check func(Config) bool
}{
	{name: "defaults", args: nil, check: func(c Config) bool {
		return c.Demo() && c.XDSAddr == "127.0.0.1:15010" && c.DebugAddr == "127.0.0.1:15014" &&
			c.LogLevel == "info" && c.LogFormat == "console" &&
			c.XDSMaxSubscribedNames == xds.DefaultMaxSubscribedNames && c.isolationIdentity() == IdentityNode && !c.xdsTLS()
	}},
	{name: "the contract", args: []string{"--config-dir", "/x", "--xds-addr", "127.0.0.1:1234", "--debug-addr", "127.0.0.1:1235"},
		check: func(c Config) bool {
			return !c.Demo() && c.ConfigDir == "/x" && c.XDSAddr == "127.0.0.1:1234" && c.DebugAddr == "127.0.0.1:1235"
		}},
	{name: "equals form", args: []string{"--push-debounce=250ms", "--log-format=json", "--log-level=debug"},
		check: func(c Config) bool {
			return c.PushDebounce == 250*time.Millisecond && c.LogFormat == "json" && c.LogLevel == "debug"
		}},
	{name: "paced pushes by default", args: nil, check: func(c Config) bool { return c.PushMode == "paced" }},
	{name: "the old debounce", args: []string{"--push-mode", "debounce"}, check: func(c Config) bool { return c.PushMode == "debounce" }},
	{name: "tls", args: []string{"--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
		check: func(c Config) bool { return c.XDSTLSCert == "c" && c.XDSTLSKey == "k" && c.XDSClientCA == "ca" }},
	{name: "cluster and folder combine", args: []string{"--kubeconfig", "kc", "--config-dir", "d"},
		check: func(c Config) bool { return c.Kubeconfig == "kc" && c.ConfigDir == "d" && !c.Demo() }},
	{name: "subscribed names", args: []string{"--xds-max-subscribed-names", "500"},
		check: func(c Config) bool { return c.XDSMaxSubscribedNames == 500 }},
	{name: "no subscribed names limit", args: []string{"--xds-max-subscribed-names=0"},
		check: func(c Config) bool { return c.XDSMaxSubscribedNames == 0 }},
	{name: "node identity", args: []string{"--namespace-isolation", "--namespace-isolation-identity", "node"},
		check: func(c Config) bool { return c.NamespaceIsolation && c.NamespaceIsolationIdentity == IdentityNode }},
	{name: "certificate identity",
		args: []string{"--namespace-isolation", "--namespace-isolation-identity=certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
		check: func(c Config) bool {
			return c.NamespaceIsolation && c.NamespaceIsolationIdentity == IdentityCertificate
		}},
	{name: "identity defaults to the certificate with the CA",
		args: []string{"--namespace-isolation", "--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-anonymous", "public"},
		check: func(c Config) bool {
			return c.isolationIdentity() == IdentityCertificate && c.xdsTLS() && c.XDSAnonymous == AnonymousPublic
		}},
	{name: "identity defaults to the node without client certificates", args: []string{"--namespace-isolation"},
		check: func(c Config) bool { return c.isolationIdentity() == IdentityNode && !c.xdsTLS() }},
	{name: "plaintext port beside the CA's TLS",
		args: []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-plaintext-addr", "127.0.0.1:15011", "--xds-tls-san", "meshd.example,10.0.0.1", "--xds-tls-san", "x.example"},
		check: func(c Config) bool {
			return c.XDSPlaintextAddr == "127.0.0.1:15011" && slices.Equal(c.XDSTLSSANs, []string{"meshd.example", "10.0.0.1", "x.example"})
		}},
	{name: "mesh config map", args: []string{"--in-cluster", "--mesh-config-map", "meshd-system/meshd"},
		check: func(c Config) bool { return c.MeshConfigMap == "meshd-system/meshd" }},
	{name: "mesh config map in a folder", args: []string{"--config-dir", "d", "--mesh-config-map=ns/mesh.v1"},
		check: func(c Config) bool { return c.MeshConfigMap == "ns/mesh.v1" }},
	{name: "unnamed local cluster by default", args: nil, check: func(c Config) bool { return c.ClusterName == "" }},
	{name: "cluster name", args: []string{"--kubeconfig", "kc", "--cluster-name", "east", "--remote-kubeconfig", "west=w.yaml"},
		check: func(c Config) bool {
			return c.ClusterName == "east" && slices.Equal(c.RemoteKubeconfigs, []string{"west=w.yaml"})
		}},
	{name: "stale hysteresis by default", args: nil,
		check: func(c Config) bool { return c.RemoteStaleGrace == 10*time.Second && c.RemoteStaleFailures == 3 }},
	{name: "stale hysteresis", args: []string{"--remote-stale-grace", "0s", "--remote-stale-failures", "1"},
		check: func(c Config) bool { return c.RemoteStaleGrace == 0 && c.RemoteStaleFailures == 1 }},
}

// TestParseFlags checks the configurations that flags parse into.
func TestParseFlags(t *testing.T) {
	for _, tc := range parseFlagsCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseFlags(tc.args, &bytes.Buffer{})
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !tc.check(c) {
				t.Errorf("config = %+v", c)
			}
		})
	}
}

// rejectedFlagsCases are bad flags and a part of the error each must give.
var rejectedFlagsCases = []struct {
	name    string
	args    []string
	wantErr string // a substring
}{
	{"negative subscribed names", []string{"--xds-max-subscribed-names", "-1"}, "--xds-max-subscribed-names -1: must not be negative"},
	{"subscribed names not a number", []string{"--xds-max-subscribed-names", "many"}, "xds-max-subscribed-names"},
	{"certificate identity without client CA",
		[]string{"--namespace-isolation", "--namespace-isolation-identity", "certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k"},
		"--namespace-isolation-identity certificate needs --ca or --xds-client-ca"},
	{"certificate identity without isolation",
		[]string{"--namespace-isolation-identity", "certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
		"needs --namespace-isolation"},
	{"unknown identity", []string{"--namespace-isolation", "--namespace-isolation-identity", "header"},
		`--namespace-isolation-identity "header": want node or certificate`},
	{"unknown flag", []string{"--bogus"}, "unknown flag: --bogus"},
	{"positional", []string{"serve"}, `unexpected argument "serve"`},
	{"bad addr", []string{"--xds-addr", "15010"}, "--xds-addr"},
	{"bad port", []string{"--debug-addr", "127.0.0.1:http"}, "--debug-addr"},
	{"same addr", []string{"--xds-addr", "127.0.0.1:1", "--debug-addr", "127.0.0.1:1"}, "different ports"},
	{"bad duration", []string{"--push-debounce", "soon"}, "push-debounce"},
	{"negative debounce", []string{"--push-debounce", "-1s"}, "must not be negative"},
	{"cert without key", []string{"--xds-tls-cert", "c"}, "together"},
	{"ca without cert", []string{"--xds-client-ca", "ca"}, "mutual TLS"},
	{"two clusters", []string{"--kubeconfig", "k", "--in-cluster"}, "give one"},
	{"mesh config map without namespace", []string{"--in-cluster", "--mesh-config-map", "meshd"},
		`--mesh-config-map "meshd": want NAMESPACE/NAME`},
	{"mesh config map with empty name", []string{"--in-cluster", "--mesh-config-map", "ns/"},
		`--mesh-config-map "ns/": want NAMESPACE/NAME`},
	{"mesh config map with three parts", []string{"--in-cluster", "--mesh-config-map", "a/b/c"},
		`--mesh-config-map "a/b/c": want NAMESPACE/NAME`},
	{"mesh config map with a bad namespace", []string{"--in-cluster", "--mesh-config-map", "Shop/mesh"},
		`--mesh-config-map "Shop/mesh": want NAMESPACE/NAME: namespace:`},
	{"mesh config map with a bad name", []string{"--in-cluster", "--mesh-config-map", "shop/mesh_config"},
		`--mesh-config-map "shop/mesh_config": want NAMESPACE/NAME: name:`},
	{"mesh config map and file", []string{"--in-cluster", "--mesh-config-map", "ns/mesh", "--mesh-config", "m.yaml"},
		"--mesh-config and --mesh-config-map both name a mesh config"},
	{"mesh config map without a source", []string{"--mesh-config-map", "ns/mesh"},
		"--mesh-config-map needs a source that holds the ConfigMap"},
	{"plaintext port without TLS", []string{"--xds-plaintext-addr", "127.0.0.1:15011"}, "--xds-addr is plaintext already"},
	{"plaintext port on the xDS port", []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-plaintext-addr", "127.0.0.1:15010"},
		"--xds-plaintext-addr 127.0.0.1:15010"},
	{"SANs without the CA", []string{"--xds-tls-san", "meshd.example"}, "--xds-tls-san names"},
	{"bad SAN", []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-tls-san", "a b"}, `--xds-tls-san "a b"`},
	{"anonymous without isolation", []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-anonymous", "none"},
		"--xds-anonymous none: applies only"},
	{"unknown anonymous", []string{"--namespace-isolation", "--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-anonymous", "all"},
		`--xds-anonymous "all"`},
	{"unknown push mode", []string{"--push-mode", "eager"}, `--push-mode "eager": want paced or debounce`},
	{"bad level", []string{"--log-level", "loud"}, "--log-level"},
	{"bad format", []string{"--log-format", "xml"}, "--log-format"},
	{"bad cluster name", []string{"--cluster-name", "East_1"}, `--cluster-name: cluster name "East_1"`},
	{"remote named as the local cluster", []string{"--kubeconfig", "kc", "--cluster-name", "east", "--remote-kubeconfig", "east=e.yaml"},
		`--remote-kubeconfig "east=e.yaml": "east" is the local cluster's --cluster-name`},
	{"stale grace as long as the timeout", []string{"--remote-stale-timeout", "10s", "--remote-stale-grace", "10s"},
		"--remote-stale-grace 10s: must be at least 0 and less than --remote-stale-timeout 10s"},
	{"negative stale grace", []string{"--remote-stale-grace", "-1s"}, "--remote-stale-grace -1s"},
	{"no stale failures", []string{"--remote-stale-failures", "0"}, "--remote-stale-failures 0: must be at least 1"},
}

// TestParseFlagsRejects checks that bad flags are refused with a one-line
// error that names them.
func TestParseFlagsRejects(t *testing.T) {
	for _, tc := range rejectedFlagsCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFlags(tc.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans several lines", err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := ParseFlags([]string{"--help"}, &out)
	if !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("err = %v, want pflag.ErrHelp", err)
	}
	for _, flag := range []string{"--config-dir", "--kubeconfig", "--in-cluster", "--mesh-config", "--mesh-config-map", "--xds-addr", "--debug-addr",
		"--log-level", "--log-format", "--push-mode", "--push-debounce", "--xds-tls-cert", "--xds-tls-key", "--xds-client-ca",
		"--namespace-isolation", "--namespace-isolation-identity", "--xds-max-subscribed-names",
		"--xds-max-connection-age", "--write-status", "--controller-name", "--status-qps", "--status-burst", "--leader-elect", "--leader-elect-resource-name",
		"--leader-elect-resource-namespace", "--leader-elect-lease-duration", "--leader-elect-renew-deadline", "--leader-elect-retry-period"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("help does not explain %s", flag)
		}
	}
	// It reads in an 80-column terminal, and values have placeholders.
	for _, l := range strings.Split(out.String(), "\n") {
		if len(l) > 80 {
			t.Errorf("help line of %d columns: %q", len(l), l)
		}
	}
	for _, want := range []string{"\n  --config-dir DIR\n", "\n  --xds-addr host:port\n", "\n  --version\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:1", true},
		{"127.9.8.7:1", true},
		{"[::1]:1", true},
		{"localhost:1", true},
		{":1", false},
		{"0.0.0.0:1", false},
		{"10.0.0.1:1", false},
		{"example.com:1", false},
		{"garbage", false},
	}
	for _, tc := range tests {
		if got := isLoopback(tc.addr); got != tc.want {
			t.Errorf("isLoopback(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}
