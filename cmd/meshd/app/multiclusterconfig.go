package app

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshd/meshd/sources/multicluster"
)

// validateMulticluster checks the remote clusters' flags, without reading
// the kubeconfig files.
func (c Config) validateMulticluster() error {
	if c.ClusterName != "" {
		if err := multicluster.ValidateName(c.ClusterName); err != nil {
			return fmt.Errorf("--cluster-name: %w", err)
		}
	}
	for _, kv := range c.RemoteKubeconfigs {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || path == "" {
			return fmt.Errorf("--remote-kubeconfig %q: want NAME=PATH", kv)
		}
		if err := multicluster.ValidateName(name); err != nil {
			return fmt.Errorf("--remote-kubeconfig %q: %w", kv, err)
		}
		if name == c.ClusterName {
			return fmt.Errorf("--remote-kubeconfig %q: %q is the local cluster's --cluster-name", kv, name)
		}
	}
	if c.RemoteSecrets && c.Kubeconfig == "" && !c.InCluster {
		return errors.New("--remote-secrets needs the local cluster to read the Secrets from: give --kubeconfig or --in-cluster")
	}
	if len(c.RemoteKubeconfigs) > 0 && c.Demo() {
		return errors.New("--remote-kubeconfig needs a local mesh to join: give --kubeconfig, --in-cluster or --config-dir")
	}
	if c.RemoteSyncTimeout <= 0 || c.RemoteStaleTimeout <= 0 {
		return fmt.Errorf("--remote-sync-timeout %s and --remote-stale-timeout %s: both must be positive", c.RemoteSyncTimeout, c.RemoteStaleTimeout)
	}
	if c.RemoteStaleGrace < 0 || c.RemoteStaleGrace >= c.RemoteStaleTimeout {
		return fmt.Errorf("--remote-stale-grace %s: must be at least 0 and less than --remote-stale-timeout %s", c.RemoteStaleGrace, c.RemoteStaleTimeout)
	}
	if c.RemoteStaleFailures < 1 {
		return fmt.Errorf("--remote-stale-failures %d: must be at least 1", c.RemoteStaleFailures)
	}
	return nil
}

// addMulticlusterFlags adds the flags of remote clusters.
func addMulticlusterFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.ClusterName, "cluster-name", "", "`NAME` of the local cluster (a DNS label): its endpoints' localities get the sub-zone suffix @NAME as a remote cluster's do, and the debug UI shows it; no remote cluster may bear it; default: unnamed, plain localities")
	fs.StringArrayVar(&c.RemoteKubeconfigs, "remote-kubeconfig", nil, "join the remote cluster `NAME=PATH` (its kubeconfig file's current context) to the mesh; repeatable; see docs/multicluster.md")
	fs.BoolVar(&c.RemoteSecrets, "remote-secrets", false, "join the remote clusters of the Secrets labelled meshd.io/multicluster=true in --remote-secrets-namespace (each key a cluster name, its value a kubeconfig; see meshd create-remote-secret), added and removed while meshd runs")
	fs.StringVar(&c.RemoteSecretsNamespace, "remote-secrets-namespace", "", "`NAMESPACE` of the remote clusters' Secrets; default: the namespace meshd runs in, else default")
	fs.DurationVar(&c.RemoteSyncTimeout, "remote-sync-timeout", c.RemoteSyncTimeout, "how long a remote cluster may take to list before its status says so (it joins once listed; /readyz never waits for it)")
	fs.DurationVar(&c.RemoteStaleTimeout, "remote-stale-timeout", c.RemoteStaleTimeout, "how long an unreachable remote cluster's last endpoints are kept, flagged stale, before they leave the mesh (until it answers again)")
	fs.DurationVar(&c.RemoteStaleGrace, "remote-stale-grace", c.RemoteStaleGrace, "how long every request to a remote cluster must have failed before its endpoints are flagged stale, so a brief blip flags nothing; the first answer clears the flag")
	fs.IntVar(&c.RemoteStaleFailures, "remote-stale-failures", c.RemoteStaleFailures, "how many requests in a row to a remote cluster must fail, as well as --remote-stale-grace, before its endpoints are flagged stale")
}

// multicluster reports whether remote clusters may join.
func (c Config) multicluster() bool { return len(c.RemoteKubeconfigs) > 0 || c.RemoteSecrets }

// remoteClusters reads the --remote-kubeconfig files. A cluster named
// twice is an error.
func (c Config) remoteClusters() ([]multicluster.Cluster, error) {
	var out []multicluster.Cluster
	seen := map[string]bool{}
	for _, kv := range c.RemoteKubeconfigs {
		name, path, _ := strings.Cut(kv, "=")
		if seen[name] {
			return nil, fmt.Errorf("--remote-kubeconfig %s: cluster %q named twice", kv, name)
		}
		seen[name] = true
		b, err := os.ReadFile(path)
		if err == nil {
			_, err = clientcmd.Load(b)
		}
		if err != nil {
			return nil, fmt.Errorf("--remote-kubeconfig %s: %w", kv, err)
		}
		out = append(out, multicluster.Cluster{Name: name, Kubeconfig: b})
	}
	return out, nil
}
