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

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(Config) bool
		wantErr string // substring; "" means success
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
		{name: "unknown push mode", args: []string{"--push-mode", "eager"}, wantErr: `--push-mode "eager": want paced or debounce`},
		{name: "tls", args: []string{"--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
			check: func(c Config) bool { return c.XDSTLSCert == "c" && c.XDSTLSKey == "k" && c.XDSClientCA == "ca" }},
		{name: "cluster and folder combine", args: []string{"--kubeconfig", "kc", "--config-dir", "d"},
			check: func(c Config) bool { return c.Kubeconfig == "kc" && c.ConfigDir == "d" && !c.Demo() }},
		{name: "subscribed names", args: []string{"--xds-max-subscribed-names", "500"},
			check: func(c Config) bool { return c.XDSMaxSubscribedNames == 500 }},
		{name: "no subscribed names limit", args: []string{"--xds-max-subscribed-names=0"},
			check: func(c Config) bool { return c.XDSMaxSubscribedNames == 0 }},
		{name: "negative subscribed names", args: []string{"--xds-max-subscribed-names", "-1"}, wantErr: "--xds-max-subscribed-names -1: must not be negative"},
		{name: "subscribed names not a number", args: []string{"--xds-max-subscribed-names", "many"}, wantErr: "xds-max-subscribed-names"},
		{name: "node identity", args: []string{"--namespace-isolation", "--namespace-isolation-identity", "node"},
			check: func(c Config) bool { return c.NamespaceIsolation && c.NamespaceIsolationIdentity == IdentityNode }},
		{name: "certificate identity",
			args: []string{"--namespace-isolation", "--namespace-isolation-identity=certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
			check: func(c Config) bool {
				return c.NamespaceIsolation && c.NamespaceIsolationIdentity == IdentityCertificate
			}},
		{name: "certificate identity without client CA",
			args:    []string{"--namespace-isolation", "--namespace-isolation-identity", "certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k"},
			wantErr: "--namespace-isolation-identity certificate needs --ca or --xds-client-ca"},
		{name: "certificate identity without isolation",
			args:    []string{"--namespace-isolation-identity", "certificate", "--xds-tls-cert", "c", "--xds-tls-key", "k", "--xds-client-ca", "ca"},
			wantErr: "needs --namespace-isolation"},
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
		{name: "plaintext port without TLS", args: []string{"--xds-plaintext-addr", "127.0.0.1:15011"}, wantErr: "--xds-addr is plaintext already"},
		{name: "plaintext port on the xDS port", args: []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-plaintext-addr", "127.0.0.1:15010"},
			wantErr: "--xds-plaintext-addr 127.0.0.1:15010"},
		{name: "SANs without the CA", args: []string{"--xds-tls-san", "meshd.example"}, wantErr: "--xds-tls-san names"},
		{name: "bad SAN", args: []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-tls-san", "a b"}, wantErr: `--xds-tls-san "a b"`},
		{name: "anonymous without isolation", args: []string{"--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-anonymous", "none"},
			wantErr: "--xds-anonymous none: applies only"},
		{name: "unknown anonymous", args: []string{"--namespace-isolation", "--ca", "--ca-dir", "d", "--ca-tokens", "t", "--xds-anonymous", "all"},
			wantErr: `--xds-anonymous "all"`},
		{name: "unknown identity", args: []string{"--namespace-isolation", "--namespace-isolation-identity", "header"},
			wantErr: `--namespace-isolation-identity "header": want node or certificate`},
		{name: "unknown flag", args: []string{"--bogus"}, wantErr: "unknown flag: --bogus"},
		{name: "positional", args: []string{"serve"}, wantErr: `unexpected argument "serve"`},
		{name: "bad addr", args: []string{"--xds-addr", "15010"}, wantErr: "--xds-addr"},
		{name: "bad port", args: []string{"--debug-addr", "127.0.0.1:http"}, wantErr: "--debug-addr"},
		{name: "same addr", args: []string{"--xds-addr", "127.0.0.1:1", "--debug-addr", "127.0.0.1:1"}, wantErr: "different ports"},
		{name: "bad duration", args: []string{"--push-debounce", "soon"}, wantErr: "push-debounce"},
		{name: "negative debounce", args: []string{"--push-debounce", "-1s"}, wantErr: "must not be negative"},
		{name: "cert without key", args: []string{"--xds-tls-cert", "c"}, wantErr: "together"},
		{name: "ca without cert", args: []string{"--xds-client-ca", "ca"}, wantErr: "mutual TLS"},
		{name: "two clusters", args: []string{"--kubeconfig", "k", "--in-cluster"}, wantErr: "give one"},
		{name: "mesh config map", args: []string{"--in-cluster", "--mesh-config-map", "meshd-system/meshd"},
			check: func(c Config) bool { return c.MeshConfigMap == "meshd-system/meshd" }},
		{name: "mesh config map in a folder", args: []string{"--config-dir", "d", "--mesh-config-map=ns/mesh.v1"},
			check: func(c Config) bool { return c.MeshConfigMap == "ns/mesh.v1" }},
		{name: "mesh config map without namespace", args: []string{"--in-cluster", "--mesh-config-map", "meshd"},
			wantErr: `--mesh-config-map "meshd": want NAMESPACE/NAME`},
		{name: "mesh config map with empty name", args: []string{"--in-cluster", "--mesh-config-map", "ns/"},
			wantErr: `--mesh-config-map "ns/": want NAMESPACE/NAME`},
		{name: "mesh config map with three parts", args: []string{"--in-cluster", "--mesh-config-map", "a/b/c"},
			wantErr: `--mesh-config-map "a/b/c": want NAMESPACE/NAME`},
		{name: "mesh config map with a bad namespace", args: []string{"--in-cluster", "--mesh-config-map", "Shop/mesh"},
			wantErr: `--mesh-config-map "Shop/mesh": want NAMESPACE/NAME: namespace:`},
		{name: "mesh config map with a bad name", args: []string{"--in-cluster", "--mesh-config-map", "shop/mesh_config"},
			wantErr: `--mesh-config-map "shop/mesh_config": want NAMESPACE/NAME: name:`},
		{name: "mesh config map and file", args: []string{"--in-cluster", "--mesh-config-map", "ns/mesh", "--mesh-config", "m.yaml"},
			wantErr: "--mesh-config and --mesh-config-map both name a mesh config"},
		{name: "mesh config map without a source", args: []string{"--mesh-config-map", "ns/mesh"},
			wantErr: "--mesh-config-map needs a source that holds the ConfigMap"},
		{name: "bad level", args: []string{"--log-level", "loud"}, wantErr: "--log-level"},
		{name: "bad format", args: []string{"--log-format", "xml"}, wantErr: "--log-format"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseFlags(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q spans several lines", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !tc.check(c) {
				t.Errorf("config = %+v", c)
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
