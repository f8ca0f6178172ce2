package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/cliflags"

	"github.com/spf13/pflag"

	"github.com/meshd/meshd/security"
	kubeca "github.com/meshd/meshd/security/kube"
	"github.com/meshd/meshd/xds"
)

// Config is everything meshd is started with. The zero value is not
// usable; start from DefaultConfig or ParseFlags.
type Config struct {
	// ConfigDir is a directory of Kubernetes YAML to read and watch. Empty:
	// no folder source.
	ConfigDir string
	// Kubeconfig is the path of a kubeconfig file of a cluster to watch.
	// Empty: no cluster, unless InCluster is set.
	Kubeconfig string
	// InCluster watches the cluster meshd runs in, through the service
	// account Kubernetes mounts into its pod.
	InCluster bool
	// MeshConfigFile is a YAML file holding the mesh config, watched for
	// changes. Empty: the defaults of sources/meshconfig.
	MeshConfigFile string
	// MeshConfigMap is "NAMESPACE/NAME" of a ConfigMap whose "mesh" key
	// holds the mesh config, watched on the cluster (the only ConfigMap
	// meshd then watches) or read from ConfigDir. Empty: MeshConfigFile,
	// or the defaults.
	MeshConfigMap string

	// XDSAddr is the host:port the ADS gRPC server listens on.
	XDSAddr string
	// DebugAddr is the host:port of the HTTP server holding the health
	// checks, metrics, pprof and the debug UI.
	DebugAddr string

	// PushDebounce is how long the xDS server may hold a change for more:
	// under PushMode paced the least time between two pushes, under
	// debounce the quiet period it waits for. Zero: the mesh config's
	// pushDebounce.
	PushDebounce time.Duration
	// PushMode is how the xDS server spaces pushes: "paced" (the
	// default, also when empty) or "debounce" (xds.PushPaced,
	// xds.PushDebounce).
	PushMode string

	// XDSTLSCert and XDSTLSKey are PEM files of the xDS listener's
	// certificate; both or neither. XDSClientCA, when set, requires
	// clients to present a certificate signed by it (mutual TLS). Without
	// them, with CA, the listener serves TLS with a certificate from
	// meshd's own CA (XDSTLSSANs), verifying the client certificates the
	// CA issued when given; with neither it is plaintext.
	XDSTLSCert, XDSTLSKey, XDSClientCA string
	// XDSTLSSANs are DNS names and IPs the serving certificate from
	// meshd's CA names beyond those it always names: localhost,
	// 127.0.0.1, ::1, the host of XDSAddr, and on a cluster the DNS
	// names of the Service XDSServiceName in meshd's namespace.
	XDSTLSSANs []string
	// XDSServiceName is the name of meshd's Service on a cluster.
	XDSServiceName string
	// XDSPlaintextAddr, when set, serves xDS and the CA in plaintext on
	// this host:port too, beside XDSAddr's TLS, for local tools and the
	// demo. Its clients have no certificate (see XDSAnonymous). Empty: no
	// plaintext port.
	XDSPlaintextAddr string
	// XDSAnonymous is what a stream without a client certificate gets
	// when namespace isolation is bound to certificates: AnonymousNone
	// ("" too: refused), AnonymousPublic (the services exported to every
	// namespace) or AnonymousNode (its node's claimed namespace).
	XDSAnonymous string

	// NamespaceIsolation makes the xDS server send a proxy only the
	// resources of the services exported to its namespace (the Service
	// annotation networking.istio.io/exportTo); the proxy's namespace is
	// its node metadata NAMESPACE, else the namespace of an Istio-style
	// node id (see xds.NodeNamespace), bound to its client certificate
	// with NamespaceIsolationIdentity. Off: every proxy sees every service.
	NamespaceIsolation bool
	// NamespaceIsolationIdentity is where a proxy's namespace comes from
	// under NamespaceIsolation: IdentityNode, the node's own claim, or
	// IdentityCertificate, the SPIFFE ID (spiffe://<td>/ns/<ns>/sa/<sa>)
	// of its verified client certificate, which needs XDSClientCA or CA;
	// a node naming another namespace than its certificate is refused
	// (see xds.WithPeerNamespace). "": IdentityCertificate when client
	// certificates are verified (CA or XDSClientCA), else IdentityNode.
	NamespaceIsolationIdentity string

	// XDSMaxSubscribedNames caps the resource names one ADS stream may
	// hold subscribed (xds.WithMaxSubscribedNames); 0: no limit.
	// DefaultConfig: xds.DefaultMaxSubscribedNames.
	XDSMaxSubscribedNames int

	// RemoteKubeconfigs are remote clusters to join, "NAME=PATH" each
	// (--remote-kubeconfig); RemoteSecrets watches the Secrets labelled
	// meshd.io/multicluster=true in RemoteSecretsNamespace (empty: the
	// namespace meshd runs in) for more. RemoteSyncTimeout,
	// RemoteStaleTimeout, RemoteStaleGrace and RemoteStaleFailures are
	// multicluster.WithSyncTimeout, WithStaleTimeout, WithStaleGrace and
	// WithStaleFailures.
	// ClusterName names the local cluster (--cluster-name) in localities
	// (collections.WithClusterName) and the debug UI; a remote cluster of
	// that name is refused. Empty: the local cluster is unnamed.
	ClusterName                           string
	RemoteKubeconfigs                     []string
	RemoteSecrets                         bool
	RemoteSecretsNamespace                string
	RemoteSyncTimeout, RemoteStaleTimeout time.Duration
	RemoteStaleGrace                      time.Duration
	RemoteStaleFailures                   int

	// LeaderElect makes replicas watching the same cluster elect one leader
	// through a coordination.k8s.io/v1 Lease; only the leader writes
	// status. Off: this process writes status whenever it watches a
	// cluster, as the only replica should.
	LeaderElect bool
	// LeaseName and LeaseNamespace name the Lease. Empty namespace: the
	// namespace meshd runs in (in a pod), else "default".
	LeaseName, LeaseNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election, as in
	// client-go's leaderelection: a new leader takes over at most
	// LeaseDuration after the old one stopped renewing.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// WriteStatus writes the status of Gateway API routes attached to
	// Services when a cluster is watched (by the leader, with LeaderElect).
	WriteStatus bool
	// ControllerName is written as status.parents[].controllerName: the
	// routes' status entries this meshd owns.
	ControllerName string
	// StatusQPS and StatusBurst limit the rate of status writes.
	StatusQPS   float64
	StatusBurst int

	// XDSMaxConnectionAge ends each xDS client connection after about this
	// long, so proxies reconnect and spread over the replicas again after
	// one was down (xds.WithMaxConnectionAge); 0: never.
	// XDSConnectionAgeGrace is how long such a connection then keeps its
	// streams, for a proxy to reconnect and a response being sent to
	// complete. Zero: 10s.
	XDSMaxConnectionAge, XDSConnectionAgeGrace time.Duration

	// CA serves meshd's certificate authority (Istio's
	// IstioCertificateService) on the xDS listener; docs/security.md.
	CA bool
	// CADir keeps a generated root in a directory (folder mode). Empty: on
	// a cluster, in the Secret CASecret.
	CADir string
	// CACert and CAKey are an operator's CA (a plug-in CA), used instead
	// of a generated root; CAChain holds the certificates above CACert up
	// to the root, when CACert is an intermediate.
	CACert, CAKey, CAChain string
	// CACertTTL is the validity of workload certificates. Zero: 24h.
	CACertTTL time.Duration
	// CATokens is a file of tokens (token namespace/serviceAccount
	// [expiry]) that authenticate workloads in folder mode. Empty: on a
	// cluster, Kubernetes service-account tokens checked by TokenReview.
	CATokens string
	// CASecret and CASecretNamespace name the Secret of the CA's state on
	// a cluster. Empty namespace: the namespace meshd runs in.
	CASecret, CASecretNamespace string
	// CAAudience is the audience a service-account token must be bound to.
	CAAudience string
	// caOptions are added to the CA's options last: tests compress its
	// lifetimes (leaf and root TTLs, rotation) to seconds.
	caOptions []security.Option

	// LogLevel is debug, info, warn or error; LogFormat is console or json.
	// ParseFlags validates both; the binary builds its logger from them.
	LogLevel, LogFormat string

	// Logger receives every log line of meshd and its libraries. Nil:
	// discard.
	Logger *slog.Logger

	// ShutdownTimeout bounds how long Run waits for the debug HTTP server's
	// requests to finish once its context ends. Zero: 3s.
	ShutdownTimeout time.Duration

	// Extend, when set, is called by New after the mesh model is built and
	// before anything runs, to add collections of one's own to the graph
	// (see examples/custom-collection). An error fails New.
	Extend func(m *Model) error
}

// DefaultControllerName is the controllerName meshd writes in route status
// unless --controller-name says otherwise.
const DefaultControllerName = "meshd.io/mesh-controller"

// Values of Config.NamespaceIsolationIdentity.
const (
	IdentityNode        = "node"
	IdentityCertificate = "certificate"
)

// Values of Config.XDSAnonymous.
const (
	AnonymousNone   = "none"
	AnonymousPublic = "public"
	AnonymousNode   = "node"
)

// DefaultConfig returns the configuration of `meshd` run with no flags: the
// embedded demo mesh, xDS and debug servers on loopback.
func DefaultConfig() Config {
	return Config{
		XDSAddr:               "127.0.0.1:15010",
		DebugAddr:             "127.0.0.1:15014",
		XDSServiceName:        "meshd",
		XDSMaxSubscribedNames: xds.DefaultMaxSubscribedNames,
		XDSMaxConnectionAge:   30 * time.Minute,
		LeaseName:             "meshd",
		LeaseDuration:         15 * time.Second,
		RenewDeadline:         10 * time.Second,
		RetryPeriod:           2 * time.Second,
		WriteStatus:           true,
		ControllerName:        DefaultControllerName,
		StatusQPS:             10,
		StatusBurst:           20,
		LogLevel:              "info",
		LogFormat:             "console",
		CACertTTL:             security.DefaultLeafTTL,
		CASecret:              "meshd-ca",
		CAAudience:            kubeca.DefaultAudience,
		RemoteSyncTimeout:     30 * time.Second,
		RemoteStaleTimeout:    5 * time.Minute,
		RemoteStaleGrace:      10 * time.Second,
		RemoteStaleFailures:   3,
	}
}

// Demo reports whether the configuration has no source of its own, so
// meshd serves the embedded demo mesh.
func (c Config) Demo() bool {
	return c.ConfigDir == "" && c.Kubeconfig == "" && !c.InCluster
}

// usageHeader is printed above the flags by --help.
const usageHeader = `meshd is a service-mesh control plane: it reads Kubernetes Services, Pods,
EndpointSlices and Gateway API routes, derives the mesh incrementally, and
serves it to Envoy and gRPC proxyless clients over ADS (xDS).

With no source flag it serves a bundled demo mesh (cmd/meshd/internal/demo
in the source tree), so that 'meshd' alone is usable at once. --config-dir
and --kubeconfig/--in-cluster may be combined; where both define an object,
the folder's wins.

Usage:
  meshd [flags]
  meshd agent [flags]   the workload certificate agent (meshd agent --help)
  meshd status | proxies | explain COLLECTION KEY
                        read a running meshd's debug API (--addr; -o json)
  meshd translate --config-dir DIR --node ID
                        print the xDS a folder yields for a node

Flags:
`

// ParseFlags parses meshd's command line (args excludes the program name)
// into a validated Config. On --help it writes the usage to out and
// returns pflag.ErrHelp. Other errors are one line, suitable for printing
// as "meshd: <error>".
func ParseFlags(args []string, out io.Writer) (Config, error) {
	c := DefaultConfig()
	fs := pflag.NewFlagSet("meshd", pflag.ContinueOnError)
	// pflag would print the error and the whole usage on a bad flag; the
	// caller prints the one-line error instead.
	fs.SetOutput(io.Discard)
	fs.SortFlags = false

	fs.StringVar(&c.ConfigDir, "config-dir", "", "read Kubernetes YAML (Services, Pods, EndpointSlices, HTTPRoutes, ...) from `DIR`, recursively, and watch it for changes")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "watch the Kubernetes cluster of the kubeconfig file `PATH` (current context)")
	fs.BoolVar(&c.InCluster, "in-cluster", false, "watch the cluster meshd runs in, with its pod's service account")
	fs.StringVar(&c.MeshConfigFile, "mesh-config", "", "read the mesh config (trust domain, domain suffix, debounce, ...) from the YAML `FILE`, watched; default: built-in defaults")
	fs.StringVar(&c.MeshConfigMap, "mesh-config-map", "", "read the mesh config from the \"mesh\" key of the ConfigMap `NAMESPACE/NAME`, watched on the cluster (or found in --config-dir); a bad edit keeps the last good config")
	fs.StringVar(&c.XDSAddr, "xds-addr", c.XDSAddr, "`host:port` the ADS (xDS) gRPC server listens on")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "`host:port` of the HTTP server with /healthz, /readyz, /metrics, /debug/pprof/ and the debug UI at /debug/ui; keep it on loopback: it shows the whole mesh")
	fs.StringVar(&c.PushMode, "push-mode", string(xds.PushPaced), "how xDS spaces pushes while changes keep coming: `paced` (a change goes out at once, then at most one push per --push-debounce, wider only while proxies fall behind) or debounce (wait for changes to pause, at most the mesh config's pushDebounceMax: the old behaviour)")
	fs.DurationVar(&c.PushDebounce, "push-debounce", 0, "how long xDS may hold a change for more, e.g. 100ms: under --push-mode paced the least time between two pushes, under debounce the pause it waits for; default: the mesh config's pushDebounce (100ms)")
	addXDSTLSFlags(fs, &c)
	fs.BoolVar(&c.NamespaceIsolation, "namespace-isolation", false, "send each proxy only the services exported to its namespace (annotation networking.istio.io/exportTo: *, . or namespaces); see --namespace-isolation-identity")
	fs.StringVar(&c.NamespaceIsolationIdentity, "namespace-isolation-identity", c.NamespaceIsolationIdentity, "where a proxy's namespace comes from under --namespace-isolation: `node` (node metadata NAMESPACE or the Istio node id: the client's claim, trust it only on a trusted network) or certificate (the spiffe://<td>/ns/<ns>/sa/<sa> URI of its client certificate, needs --ca or --xds-client-ca; a node claiming another namespace is refused); default: certificate with --ca or --xds-client-ca, else node")
	fs.StringVar(&c.XDSAnonymous, "xds-anonymous", "", "what a proxy without a client certificate gets under namespace isolation by certificate: `none` (refused with Unauthenticated), public (the services exported to every namespace) or node (the namespace its node claims; for a plaintext port on a trusted network); default: none")
	fs.IntVar(&c.XDSMaxSubscribedNames, "xds-max-subscribed-names", c.XDSMaxSubscribedNames, "most resource names one ADS stream may hold subscribed, over all types; a request beyond it ends the stream with ResourceExhausted; 0: no limit")
	fs.DurationVar(&c.XDSMaxConnectionAge, "xds-max-connection-age", c.XDSMaxConnectionAge, "end each xDS client connection after about this long (±10%), with 10s of grace, so proxies reconnect and spread over the replicas again after one was down; a proxy naming what it holds is sent nothing on reconnecting; 0: never")
	fs.BoolVar(&c.WriteStatus, "write-status", c.WriteStatus, "write status in the watched cluster: Accepted and ResolvedRefs of HTTPRoutes and GRPCRoutes attached to Services, meshd.io/Supported of Istio security policies; with --leader-elect only the leader writes")
	fs.StringVar(&c.ControllerName, "controller-name", c.ControllerName, "`NAME` written as status.parents[].controllerName: the route status entries this meshd owns (domain/path)")
	fs.Float64Var(&c.StatusQPS, "status-qps", c.StatusQPS, "most route status writes per second, on average")
	fs.IntVar(&c.StatusBurst, "status-burst", c.StatusBurst, "most route status writes in a burst")
	fs.BoolVar(&c.LeaderElect, "leader-elect", false, "elect one leader among the replicas watching the cluster, through a coordination.k8s.io/v1 Lease; only the leader writes status (every replica serves xDS)")
	fs.StringVar(&c.LeaseName, "leader-elect-resource-name", c.LeaseName, "`NAME` of the leader election Lease")
	fs.StringVar(&c.LeaseNamespace, "leader-elect-resource-namespace", "", "`NAMESPACE` of the leader election Lease; default: the namespace meshd runs in, else default")
	fs.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", c.LeaseDuration, "how long a Lease holds without renewal: the longest a new leader waits after the old one stops")
	fs.DurationVar(&c.RenewDeadline, "leader-elect-renew-deadline", c.RenewDeadline, "how long the leader keeps trying to renew before it stops leading")
	fs.DurationVar(&c.RetryPeriod, "leader-elect-retry-period", c.RetryPeriod, "how often candidates try to acquire, and the leader to renew, the Lease")
	addCAFlags(fs, &c)
	addMulticlusterFlags(fs, &c)
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "least severe log `LEVEL` printed: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log `FORMAT`: console (human-readable) or json (one object per line)")
	if err := cliflags.Parse(fs, args, out, usageHeader); err != nil {
		return Config{}, err
	}
	if len(c.XDSTLSSANs) == 0 {
		c.XDSTLSSANs = nil // as in DefaultConfig: pflag makes an empty list
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks what can be checked without touching the file system or
// the network, and returns the first problem as a one-line error.
func (c Config) Validate() error {
	if err := checkAddr("--xds-addr", c.XDSAddr); err != nil {
		return err
	}
	if err := checkAddr("--debug-addr", c.DebugAddr); err != nil {
		return err
	}
	if c.XDSAddr == c.DebugAddr && !strings.HasSuffix(c.XDSAddr, ":0") {
		return fmt.Errorf("--xds-addr and --debug-addr are both %s: they need different ports", c.XDSAddr)
	}
	if err := c.validatePush(); err != nil {
		return err
	}
	if (c.XDSTLSCert == "") != (c.XDSTLSKey == "") {
		return errors.New("--xds-tls-cert and --xds-tls-key must be given together")
	}
	if c.XDSClientCA != "" && c.XDSTLSCert == "" {
		return errors.New("--xds-client-ca needs --xds-tls-cert and --xds-tls-key: mutual TLS is TLS first")
	}
	if c.XDSMaxSubscribedNames < 0 {
		return fmt.Errorf("--xds-max-subscribed-names %d: must not be negative (0: no limit)", c.XDSMaxSubscribedNames)
	}
	if err := c.validateIdentity(); err != nil {
		return err
	}
	if c.Kubeconfig != "" && c.InCluster {
		return errors.New("--kubeconfig and --in-cluster both name a cluster: give one")
	}
	if err := c.validateMeshConfigMap(); err != nil {
		return err
	}
	if c.XDSMaxConnectionAge < 0 {
		return fmt.Errorf("--xds-max-connection-age %s: must not be negative (0: never)", c.XDSMaxConnectionAge)
	}
	for _, check := range []func() error{c.validateLeadership, c.validateCA, c.validateXDSTLS, c.validateMulticluster} {
		if err := check(); err != nil {
			return err
		}
	}
	if c.LogLevel != "" {
		if _, err := parseLevel(c.LogLevel); err != nil {
			return err
		}
	}
	switch c.LogFormat {
	case "", "console", "json":
	default:
		return fmt.Errorf("--log-format %q: want console or json", c.LogFormat)
	}
	return nil
}

// validatePush checks --push-debounce and --push-mode.
func (c Config) validatePush() error {
	if c.PushDebounce < 0 {
		return fmt.Errorf("--push-debounce %s: must not be negative", c.PushDebounce)
	}
	if m := xds.PushMode(c.PushMode); m != "" && m != xds.PushPaced && m != xds.PushDebounce {
		return fmt.Errorf("--push-mode %q: want %s or %s", c.PushMode, xds.PushPaced, xds.PushDebounce)
	}
	return nil
}

// controllerNamePattern is the Gateway API's GatewayController format: a
// domain-prefixed path.
var controllerNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$`)

func (c Config) validateLeadership() error {
	if c.WriteStatus && (len(c.ControllerName) > 253 || !controllerNamePattern.MatchString(c.ControllerName)) {
		return fmt.Errorf("--controller-name %q: want a domain-prefixed path of at most 253 characters, e.g. %s", c.ControllerName, DefaultControllerName)
	}
	if c.WriteStatus && (c.StatusQPS <= 0 || c.StatusBurst < 1) {
		return fmt.Errorf("--status-qps %g and --status-burst %d: both must be positive", c.StatusQPS, c.StatusBurst)
	}
	if !c.LeaderElect {
		return nil
	}
	if c.Kubeconfig == "" && !c.InCluster {
		return errors.New("--leader-elect needs a cluster to hold the Lease: give --kubeconfig or --in-cluster")
	}
	if c.LeaseName == "" {
		return errors.New("--leader-elect-resource-name must not be empty")
	}
	// client-go's leaderelection refuses other timings with a panic-free
	// but late error; say it at once, by flag.
	if c.RetryPeriod <= 0 {
		return fmt.Errorf("--leader-elect-retry-period %s: must be positive", c.RetryPeriod)
	}
	if c.RenewDeadline <= time.Duration(leaderJitter*float64(c.RetryPeriod)) {
		return fmt.Errorf("--leader-elect-renew-deadline %s: must be more than %.1f × --leader-elect-retry-period (%s)", c.RenewDeadline, leaderJitter, c.RetryPeriod)
	}
	if c.LeaseDuration <= c.RenewDeadline {
		return fmt.Errorf("--leader-elect-lease-duration %s: must be more than --leader-elect-renew-deadline (%s)", c.LeaseDuration, c.RenewDeadline)
	}
	return nil
}

func checkAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port, e.g. 127.0.0.1:15010", flag, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%s %q: port %q is not a number from 0 to 65535", flag, addr, port)
	}
	return nil
}

// isLoopback reports whether a listener on addr is reachable only from
// this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
