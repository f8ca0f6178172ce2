package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// addCAFlags adds the certificate authority's flags.
func addCAFlags(fs *pflag.FlagSet, c *Config) {
	fs.BoolVar(&c.CA, "ca", false, "serve meshd's certificate authority (Istio's IstioCertificateService) on the xDS listener; see docs/security.md")
	fs.StringVar(&c.CADir, "ca-dir", "", "keep the CA's generated root in `DIR` (folder mode; created, key mode 0600); default on a cluster: the Secret --ca-secret")
	fs.StringVar(&c.CACert, "ca-cert", "", "PEM `FILE` of an operator's CA certificate to sign with instead of a generated root (plug-in CA); with --ca-key")
	fs.StringVar(&c.CAKey, "ca-key", "", "PEM private key `FILE` of --ca-cert")
	fs.StringVar(&c.CAChain, "ca-chain", "", "PEM `FILE` of the certificates above --ca-cert up to its root, when --ca-cert is an intermediate")
	fs.DurationVar(&c.CACertTTL, "ca-cert-ttl", c.CACertTTL, "validity of workload certificates; agents renew at half of it")
	fs.StringVar(&c.CATokens, "ca-tokens", "", "`FILE` of workload tokens, one a line: TOKEN NAMESPACE/SERVICEACCOUNT [EXPIRY RFC 3339] (folder mode); default on a cluster: service-account tokens checked by TokenReview")
	fs.StringVar(&c.CASecret, "ca-secret", c.CASecret, "`NAME` of the Secret holding the CA's root on a cluster, created at first start and read by every replica")
	fs.StringVar(&c.CASecretNamespace, "ca-secret-namespace", "", "`NAMESPACE` of --ca-secret; default: the namespace meshd runs in, else default")
	fs.StringVar(&c.CAAudience, "ca-audience", c.CAAudience, "`AUDIENCE` a service-account token must be bound to (TokenRequest audiences)")
}

// validateCA checks the CA's flags: each names where the root and the
// callers' identities come from.
func (c Config) validateCA() error {
	if !c.CA {
		for _, f := range []struct{ flag, value string }{{"--ca-dir", c.CADir}, {"--ca-cert", c.CACert}, {"--ca-tokens", c.CATokens}} {
			if f.value != "" {
				return fmt.Errorf("%s needs --ca", f.flag)
			}
		}
		return nil
	}
	cluster := c.Kubeconfig != "" || c.InCluster
	if (c.CACert == "") != (c.CAKey == "") {
		return errors.New("--ca-cert and --ca-key must be given together")
	}
	if c.CAChain != "" && c.CACert == "" {
		return errors.New("--ca-chain needs --ca-cert and --ca-key")
	}
	if c.CACert != "" && c.CADir != "" {
		return errors.New("--ca-cert and --ca-dir both name the CA's root: give one")
	}
	if c.CACert == "" && c.CADir == "" && !cluster {
		return errors.New("--ca needs a root: --ca-dir (folder mode), --ca-cert/--ca-key, or a cluster (--kubeconfig, --in-cluster) to keep it in a Secret")
	}
	if c.CATokens == "" && !cluster {
		return errors.New("--ca needs a way to authenticate workloads: --ca-tokens, or a cluster for TokenReview")
	}
	if c.CACertTTL < 0 {
		return fmt.Errorf("--ca-cert-ttl %s: must not be negative", c.CACertTTL)
	}
	if c.CACertTTL > 0 && c.CACertTTL < 2*time.Minute {
		return fmt.Errorf("--ca-cert-ttl %s: at least 2m, so that renewing at half life leaves time to retry", c.CACertTTL)
	}
	return nil
}
