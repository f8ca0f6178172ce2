package app

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/pflag"
)

// addXDSTLSFlags adds the flags of the xDS listener's transport: TLS from
// files or from meshd's CA, and the plaintext port.
func addXDSTLSFlags(fs *pflag.FlagSet, c *Config) {
	fs.StringVar(&c.XDSTLSCert, "xds-tls-cert", "", "PEM certificate `FILE` of the xDS listener; with --xds-tls-key, serves xDS over TLS with it; default with --ca: a certificate from meshd's CA, renewed at half life")
	fs.StringVar(&c.XDSTLSKey, "xds-tls-key", "", "PEM private key `FILE` of the xDS listener")
	fs.StringVar(&c.XDSClientCA, "xds-client-ca", "", "PEM CA bundle `FILE`; when set, xDS clients must present a certificate it signed (mTLS); default with --ca: client certificates are verified by the CA's roots when given")
	fs.StringSliceVar(&c.XDSTLSSANs, "xds-tls-san", nil, "more DNS `NAMES` or IPs for the serving certificate from meshd's CA (comma-separated or repeated), beyond localhost, 127.0.0.1, ::1, the host of --xds-addr and, on a cluster, the DNS names of the Service --xds-service-name")
	fs.StringVar(&c.XDSServiceName, "xds-service-name", c.XDSServiceName, "`NAME` of meshd's Service on a cluster: its DNS names (NAME.NAMESPACE.svc, ...svc.cluster.local) are in the serving certificate")
	fs.StringVar(&c.XDSPlaintextAddr, "xds-plaintext-addr", "", "also serve xDS and the CA in plaintext on `host:port`, beside the TLS of --xds-addr: for local tools and the demo; its clients have no certificate (see --xds-anonymous); keep it on loopback")
}

// xdsTLS reports whether the xDS listener serves TLS: from files, or
// from meshd's CA.
func (c Config) xdsTLS() bool { return c.XDSTLSCert != "" || c.CA }

// verifiesClients reports whether client certificates are verified: by
// --xds-client-ca, or by the CA's roots.
func (c Config) verifiesClients() bool { return c.XDSClientCA != "" || c.CA }

// isolationIdentity is where an isolated proxy's namespace comes from,
// the default resolved.
func (c Config) isolationIdentity() string {
	if c.NamespaceIsolationIdentity != "" {
		return c.NamespaceIsolationIdentity
	}
	if c.verifiesClients() {
		return IdentityCertificate
	}
	return IdentityNode
}

func (c Config) validateIdentity() error {
	switch c.NamespaceIsolationIdentity {
	case "", IdentityNode:
	case IdentityCertificate:
		if !c.NamespaceIsolation {
			return errors.New("--namespace-isolation-identity certificate needs --namespace-isolation")
		}
		if !c.verifiesClients() {
			return errors.New("--namespace-isolation-identity certificate needs --ca or --xds-client-ca: the namespace comes from a verified client certificate")
		}
	default:
		return fmt.Errorf("--namespace-isolation-identity %q: want node or certificate", c.NamespaceIsolationIdentity)
	}
	switch c.XDSAnonymous {
	case "":
	case AnonymousNone, AnonymousPublic, AnonymousNode:
		if !c.NamespaceIsolation || c.isolationIdentity() != IdentityCertificate {
			return fmt.Errorf("--xds-anonymous %s: applies only under --namespace-isolation by certificate (with --ca or --xds-client-ca); without, every proxy sees what its node claims", c.XDSAnonymous)
		}
	default:
		return fmt.Errorf("--xds-anonymous %q: want none, public or node", c.XDSAnonymous)
	}
	return nil
}

// validateXDSTLS checks the plaintext port and the serving certificate's
// names.
func (c Config) validateXDSTLS() error {
	if c.XDSPlaintextAddr != "" {
		if err := checkAddr("--xds-plaintext-addr", c.XDSPlaintextAddr); err != nil {
			return err
		}
		if !c.xdsTLS() {
			return errors.New("--xds-plaintext-addr: --xds-addr is plaintext already (no --ca, no --xds-tls-cert)")
		}
		if !strings.HasSuffix(c.XDSPlaintextAddr, ":0") && (c.XDSPlaintextAddr == c.XDSAddr || c.XDSPlaintextAddr == c.DebugAddr) {
			return fmt.Errorf("--xds-plaintext-addr %s: the port of --xds-addr or --debug-addr", c.XDSPlaintextAddr)
		}
	}
	if len(c.XDSTLSSANs) > 0 && (!c.CA || c.XDSTLSCert != "") {
		return errors.New("--xds-tls-san names the serving certificate from meshd's CA: it needs --ca, and no --xds-tls-cert")
	}
	for _, san := range c.XDSTLSSANs {
		if san == "" || (strings.ContainsAny(san, " /:") && net.ParseIP(san) == nil) {
			return fmt.Errorf("--xds-tls-san %q: want a DNS name or an IP", san)
		}
	}
	return nil
}
