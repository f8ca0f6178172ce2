package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/meshd/meshd/cmd/meshd/internal/metrics"
	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/security/caserver"
	"github.com/meshd/meshd/security/castore"
	kubeca "github.com/meshd/meshd/security/kube"
	"github.com/meshd/meshd/sources/meshconfig"
	"github.com/meshd/meshd/xds"
)

// withCA adds the CA's signing service to the xDS server's options when
// --ca is set.
func (a *App) withCA(opts []xds.Option) ([]xds.Option, error) {
	if !a.cfg.CA {
		return opts, nil
	}
	o, err := a.buildCA()
	if err != nil {
		return nil, err
	}
	return append(opts, o), nil
}

// buildCA creates the certificate authority and its signing service,
// returned as the xDS server's option that serves it. A root in a
// directory or an operator's files is read (or created) here, so a bad
// one fails start-up; a Secret is read by Run, which retries until it can.
func (a *App) buildCA() (xds.Option, error) {
	td := a.trustDomain
	opts := []security.Option{security.WithLogger(a.log.With("component", "ca")), security.WithLeafTTL(a.cfg.CACertTTL)}
	opts = append(opts, a.cfg.caOptions...)
	ca, err := a.newAuthority(td(), opts)
	if err != nil {
		return nil, err
	}
	auth, err := a.newAuthenticator()
	if err != nil {
		return nil, err
	}
	a.ca = ca
	svc := caserver.New(ca, auth, td, caserver.WithLogger(a.log.With("component", "ca")))
	a.metrics = append(a.metrics, metrics.NewCACollector(caMetrics{svc, ca}))
	return xds.WithServices(svc.Register), nil
}

// trustDomain is the mesh config's trust domain now.
func (a *App) trustDomain() spiffeid.TrustDomain {
	mc, ok := a.model.Mesh.MeshConfig.Value()
	if !ok {
		mc = meshconfig.Default()
	}
	td, err := spiffeid.TrustDomainFromString(mc.TrustDomain)
	if err != nil {
		// The mesh config validates its trust domain; this is the default's.
		return spiffeid.RequireTrustDomainFromString(meshconfig.Default().TrustDomain)
	}
	return td
}

// newAuthority returns the authority of the configured root: an
// operator's, a directory's, or the cluster Secret's.
func (a *App) newAuthority(td spiffeid.TrustDomain, opts []security.Option) (*security.Authority, error) {
	c := a.cfg
	switch {
	case c.CACert != "":
		kp, err := loadPluginCA(c.CACert, c.CAKey, c.CAChain)
		if err != nil {
			return nil, err
		}
		a.log.Info("CA signs with the operator's certificate", "subject", kp.Cert.Subject.String(), "expires", kp.Cert.NotAfter)
		return security.NewStaticAuthority(kp, opts...), nil
	case c.CADir != "":
		ca := security.NewAuthority(castore.NewDir(c.CADir), td, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ca.Init(ctx); err != nil {
			return nil, fmt.Errorf("--ca-dir %s: %w", c.CADir, err)
		}
		a.components = append(a.components, component{"ca", ca.Run})
		return ca, nil
	}
	ns := c.CASecretNamespace
	if ns == "" {
		ns = ownNamespace(c.InCluster)
	}
	ca := security.NewAuthority(kubeca.NewSecretStore(a.cluster.clients.Kube, ns, c.CASecret), td, opts...)
	ready := make(chan struct{})
	a.ready.add("CA root (Secret "+ns+"/"+c.CASecret+")", ready)
	a.components = append(a.components, component{"ca", func(ctx context.Context) error {
		if err := a.initWithRetry(ctx, ca); err != nil {
			return err
		}
		close(ready)
		return ca.Run(ctx)
	}})
	return ca, nil
}

// initWithRetry runs Init until it succeeds or ctx ends: the API server
// may not answer yet when meshd starts.
func (a *App) initWithRetry(ctx context.Context, ca *security.Authority) error {
	delay := 200 * time.Millisecond
	for {
		err := ca.Init(ctx)
		if err == nil {
			return nil
		}
		a.log.Warn("CA root not loaded yet; retrying", "error", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

func loadPluginCA(certFile, keyFile, chainFile string) (security.KeyPair, error) {
	var data [3][]byte
	for i, f := range []struct{ flag, path string }{{"--ca-cert", certFile}, {"--ca-key", keyFile}, {"--ca-chain", chainFile}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return security.KeyPair{}, fmt.Errorf("%s: %w", f.flag, err)
		}
		data[i] = b
	}
	kp, err := security.NewKeyPair(data[0], data[1], data[2])
	if err != nil {
		return security.KeyPair{}, fmt.Errorf("--ca-cert %s: %w", certFile, err)
	}
	return kp, nil
}

// newAuthenticator returns the tokens file's authenticator, else the
// cluster's TokenReview.
func (a *App) newAuthenticator() (security.Authenticator, error) {
	if a.cfg.CATokens != "" {
		t, err := security.LoadTokens(a.cfg.CATokens)
		if err != nil {
			return nil, fmt.Errorf("--ca-tokens: %w", err)
		}
		a.log.Info("CA authenticates workloads by the tokens file", "file", a.cfg.CATokens, "tokens", t.Len())
		return t, nil
	}
	return kubeca.NewTokenReviewer(a.cluster.clients.Kube, a.cfg.CAAudience), nil
}

// caMetrics is what the CA collector reads.
type caMetrics struct {
	svc *caserver.Service
	ca  *security.Authority
}

func (m caMetrics) Stats() caserver.Stats { return m.svc.Stats() }
func (m caMetrics) Expiry() time.Time     { return m.ca.Expiry() }
func (m caMetrics) TrustedRoots() int     { return len(m.ca.View().Bundle) }
