package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/meshd/meshd/cmd/meshd/internal/cliflags"

	"github.com/meshd/meshd/cmd/meshd/internal/certpool"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/security/agent"
)

const agentUsage = `meshd agent runs beside a proxyless gRPC application: it obtains the
workload's certificate from meshd's CA with the workload's token, keeps it
renewed in --out, and writes the gRPC xDS bootstrap there, so that the
application needs only GRPC_XDS_BOOTSTRAP=<out>/bootstrap.json.

Usage:
  meshd agent [flags]

Flags:
`

// agentFlags are meshd agent's command line.
type agentFlags struct {
	cfg                   agent.Config
	rootCert, xdsRootCert string
	once                  bool
	logLevel, logFormat   string
}

// parseAgentFlags parses args (after "agent"); on --help it writes the
// usage to out and returns pflag.ErrHelp.
func parseAgentFlags(args []string, out io.Writer) (agentFlags, error) {
	var f agentFlags
	fs := pflag.NewFlagSet("meshd agent", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&f.cfg.XDSAddr, "xds-addr", "127.0.0.1:15010", "`host:port` of meshd's xDS server, written into the bootstrap")
	fs.StringVar(&f.cfg.CAAddr, "ca-addr", "", "`host:port` of meshd's CA; default: --xds-addr")
	fs.StringVar(&f.rootCert, "root-cert", "", "PEM `FILE` verifying meshd's serving certificate at first contact (meshd's CA bundle, e.g. --ca-dir's root-cert.pem): the CA is reached over TLS, and the bootstrap uses TLS channel credentials with the workload certificate, verifying meshd by the bundle the agent writes; default: plaintext (meshd on loopback)")
	fs.StringVar(&f.xdsRootCert, "xds-root-cert", "", "PEM `FILE` verifying meshd's xDS certificate in the bootstrap instead of the mesh's bundle, for a meshd serving an operator's certificate (--xds-tls-cert); needs --root-cert")
	fs.StringVar(&f.cfg.TokenFile, "token-file", "/var/run/secrets/tokens/meshd-ca-token", "`FILE` holding the workload's token, reread at each renewal")
	fs.StringVar(&f.cfg.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the workload's `NAMESPACE` (node id and metadata); default: $POD_NAMESPACE")
	fs.StringVar(&f.cfg.ServiceAccount, "service-account", os.Getenv("SERVICE_ACCOUNT"), "the workload's service `ACCOUNT` (node metadata); default: $SERVICE_ACCOUNT")
	fs.StringVar(&f.cfg.PodName, "pod-name", os.Getenv("POD_NAME"), "`NAME` in the default node id; default: $POD_NAME")
	fs.StringVar(&f.cfg.PodIP, "pod-ip", os.Getenv("POD_IP"), "`IP` in the default node id; default: $POD_IP")
	fs.StringVar(&f.cfg.NodeID, "node-id", "", "xDS node `ID`; default: sidecar~<pod-ip>~<pod-name>.<namespace>~<namespace>.svc.cluster.local")
	fs.StringVar(&f.cfg.OutDir, "out", "", "`DIR` receiving cert-chain.pem, key.pem, root-cert.pem and bootstrap.json (required)")
	fs.BoolVar(&f.once, "once", false, "obtain the certificate, write the files and exit, instead of renewing until stopped")
	fs.StringVar(&f.logLevel, "log-level", "info", "least severe log `LEVEL` printed: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "console", "log `FORMAT`: console or json")
	if err := cliflags.Parse(fs, args, out, agentUsage); err != nil {
		return agentFlags{}, err
	}
	if f.cfg.CAAddr == "" {
		f.cfg.CAAddr = f.cfg.XDSAddr
	}
	switch {
	case f.cfg.OutDir == "":
		return agentFlags{}, errors.New("--out is required")
	case f.xdsRootCert != "" && f.rootCert == "":
		return agentFlags{}, errors.New("--xds-root-cert needs --root-cert: the CA is then reached over TLS too")
	case f.cfg.Namespace == "" || f.cfg.ServiceAccount == "":
		return agentFlags{}, errors.New("--namespace and --service-account are required (or $POD_NAMESPACE and $SERVICE_ACCOUNT)")
	}
	return f, nil
}

// runAgent is `meshd agent`; it returns the exit code.
func runAgent(args []string) int {
	f, err := parseAgentFlags(args, os.Stdout)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err == nil {
		f.cfg.Logger, err = app.NewLogger(os.Stderr, f.logLevel, f.logFormat)
	}
	if err == nil && f.rootCert != "" {
		f.cfg.CATLS, err = rootTLS(f.rootCert)
		f.cfg.XDSTLS, f.cfg.XDSCAFile = true, f.xdsRootCert
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshd agent: %v\n", err)
		return 2
	}
	a, err := agent.New(f.cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshd agent: %v\n", err)
		return 2
	}
	defer a.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.once {
		err = once(ctx, a)
	} else if err = a.Run(ctx); errors.Is(err, context.Canceled) {
		err = nil
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshd agent: %v\n", err)
		return 1
	}
	return 0
}

func once(ctx context.Context, a *agent.Agent) error {
	if err := a.WriteBootstrap(); err != nil {
		return err
	}
	_, err := a.Renew(ctx)
	return err
}

// rootTLS is a client TLS config trusting the PEM bundle in file.
func rootTLS(file string) (*tls.Config, error) {
	pool, err := certpool.Read("--root-cert", file)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
