package agent

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Config is what an Agent needs.
type Config struct {
	// CAAddr is meshd's signing API (host:port); XDSAddr its xDS server,
	// written into the bootstrap.
	CAAddr, XDSAddr string
	// CATLS secures the connection to the CA; nil: plaintext, for a meshd
	// on loopback only. Its RootCAs verify meshd at first contact; the
	// agent trusts the bundle it last wrote too, so that meshd's serving
	// certificate may move to a new root.
	CATLS *tls.Config
	// XDSTLS makes the bootstrap reach the xDS server over TLS (gRFC
	// A65 "tls" channel credentials), presenting the workload certificate
	// and verifying meshd's by the bundle the agent writes
	// (root-cert.pem), which follows the mesh's root rotations: for a
	// meshd serving a certificate from its own CA. XDSCAFile, when set,
	// verifies it by that PEM bundle instead (a meshd serving an
	// operator's certificate), and implies TLS. Neither: insecure channel
	// credentials.
	XDSTLS    bool
	XDSCAFile string
	// TokenFile holds the workload's token; it is reread at every renewal,
	// since projected tokens are rotated by the kubelet.
	TokenFile string
	// Namespace and ServiceAccount name the workload, for the node id and
	// metadata; the CA takes the identity from the token.
	Namespace, ServiceAccount string
	// NodeID is the xDS node id. Empty: sidecar~<PodIP>~<PodName>.<ns>~<ns>.svc.cluster.local.
	NodeID string
	// PodName and PodIP complete the default node id.
	PodName, PodIP string
	// OutDir receives the files.
	OutDir string
	// RefreshInterval is how often the file_watcher plugin rereads the
	// files. Zero: 10s.
	RefreshInterval time.Duration
	// Logger receives the agent's log. Nil: discard.
	Logger *slog.Logger
}

// check validates c and fills its defaults.
func (c *Config) check() error {
	switch {
	case c.CAAddr == "":
		return errors.New("agent: no CA address")
	case c.XDSAddr == "":
		return errors.New("agent: no xDS address")
	case c.TokenFile == "":
		return errors.New("agent: no token file")
	case c.OutDir == "":
		return errors.New("agent: no output directory")
	case c.Namespace == "" || c.ServiceAccount == "":
		return errors.New("agent: namespace and service account are needed for the node")
	}
	if c.NodeID == "" {
		c.NodeID = fmt.Sprintf("sidecar~%s~%s.%s~%s.svc.cluster.local", c.PodIP, c.PodName, c.Namespace, c.Namespace)
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}
