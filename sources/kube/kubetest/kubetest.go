package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ErrNoBinaries is returned by Start when etcd or kube-apiserver is not
// installed.
var ErrNoBinaries = errors.New("kube-apiserver and etcd not found; build them with .ci/kube-testenv.sh build")

// Env is a running etcd and kube-apiserver.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same.
	Kubeconfig string

	dir       string
	opts      options
	etcd, api *exec.Cmd
}

// Option configures Start.
type Option func(*options)

type options struct {
	authorization  string
	serviceIPRange string
}

// WithServiceIPRange sets the API server's --service-cluster-ip-range,
// which bounds how many Services with a cluster IP it holds. Default:
// "10.0.0.0/24" (254 Services).
func WithServiceIPRange(cidr string) Option {
	return func(o *options) { o.serviceIPRange = cidr }
}

// WithAuthorization sets the API server's --authorization-mode, e.g.
// "RBAC" or "Node,RBAC". Default: "AlwaysAllow". Under RBAC the API server
// creates its bootstrap roles (system:discovery and the like) itself, so
// an authenticated user may use discovery and nothing more until bound to
// a role; the admin token keeps full access through system:masters.
func WithAuthorization(mode string) Option {
	return func(o *options) { o.authorization = mode }
}

// Start launches etcd and kube-apiserver on free loopback ports, with
// their data and logs in a new temporary directory, and waits until the
// API server is ready. Stop ends both and removes the directory.
func Start(ctx context.Context, opts ...Option) (*Env, error) {
	bin := BinDir()
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("%w (looked in %s)", ErrNoBinaries, bin)
		}
	}
	dir, err := os.MkdirTemp("", "meshd-kubetest-")
	if err != nil {
		return nil, err
	}
	e := &Env{dir: dir, opts: options{authorization: "AlwaysAllow", serviceIPRange: "10.0.0.0/24"}}
	for _, o := range opts {
		o(&e.opts)
	}
	if err := e.start(ctx, bin); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context, bin string) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if e.etcd, err = e.launch(filepath.Join(bin, "etcd"), "etcd.log",
		"--name", "default", "--data-dir", filepath.Join(e.dir, "etcd"),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		"--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return err
	}

	token, err := e.writeCredentials()
	if err != nil {
		return err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	if e.api, err = e.launch(filepath.Join(bin, "kube-apiserver"), "apiserver.log",
		"--etcd-servers", clientURL,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[2]),
		// Advertising loopback is refused unless the endpoint reconciler,
		// which would publish it in the kubernetes Service, is off.
		"--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
		"--cert-dir", filepath.Join(e.dir, "certs"),
		"--service-account-issuer", ServiceAccountIssuer,
		"--service-account-key-file", filepath.Join(e.dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(e.dir, "sa.key"),
		"--token-auth-file", filepath.Join(e.dir, "tokens.csv"),
		"--authorization-mode", e.opts.authorization,
		"--service-cluster-ip-range", e.opts.serviceIPRange,
		// No controller-manager creates default service accounts.
		"--disable-admission-plugins", "ServiceAccount"); err != nil {
		return err
	}

	e.Config = &rest.Config{
		Host: host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             1000, Burst: 1000,
	}
	e.Kubeconfig = filepath.Join(e.dir, "kubeconfig")
	if err := e.writeKubeconfig(e.Kubeconfig, "", nil); err != nil {
		return err
	}
	return e.waitReady(ctx, host, token)
}

// ServiceAccountIssuer is the issuer (iss claim) of the API server's
// service-account tokens.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceAccountKeyFile returns the PEM file of the RSA key the API server
// signs service-account tokens with, so a test can mint a token the
// TokenRequest API would refuse to (an expired one, say).
func (e *Env) ServiceAccountKeyFile() string { return filepath.Join(e.dir, "sa.key") }

// ConfigAs returns a copy of Config that acts as user, with groups, through
// impersonation: its requests are authorized as the user's would be, as a
// test of RBAC wants (see WithAuthorization). For a service account, pass
// its user name, system:serviceaccount:<namespace>:<name>, and no groups:
// the API server then adds the service account's own groups
// (system:serviceaccounts, system:serviceaccounts:<namespace>), as for a
// real service account token. Every impersonated user is in
// system:authenticated too.
func (e *Env) ConfigAs(user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(e.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

// KubeconfigAs writes a kubeconfig file into dir that reaches the API
// server as ConfigAs(user, groups...) does (the user entry's as and
// as-groups fields), for a binary run with --kubeconfig, and returns its
// path. The file holds the admin token: keep dir private to the test.
func (e *Env) KubeconfigAs(dir, user string, groups ...string) (string, error) {
	f, err := os.CreateTemp(dir, "kubeconfig-")
	if err != nil {
		return "", fmt.Errorf("kubeconfig for %s: %w", user, err)
	}
	path := f.Name()
	f.Close()
	if err := e.writeKubeconfig(path, user, groups); err != nil {
		return "", fmt.Errorf("kubeconfig for %s: %w", user, err)
	}
	return path, nil
}

// writeKubeconfig writes a kubeconfig of the admin token to path,
// impersonating user and groups when user is set.
func (e *Env) writeKubeconfig(path, user string, groups []string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: e.Config.Host, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		Token:             e.Config.BearerToken,
		Impersonate:       user,
		ImpersonateGroups: groups,
	}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	cfg.CurrentContext = "test"
	// WriteToFile creates the file with mode 0600: it holds the token.
	return clientcmd.WriteToFile(*cfg, path)
}

// WriteKubeconfig writes to path a kubeconfig that reaches server with
// no credentials: for an API server behind a proxy of the test's, or at
// an address where none answers.
func WriteKubeconfig(path, server string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["anonymous"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "anonymous"}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("kubeconfig of %s: %w", server, err)
	}
	return nil
}

// launch starts a binary with its output in a log file of the directory.
func (e *Env) launch(path, logName string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(e.dir, logName))
	if err != nil {
		return nil, err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so a Ctrl-C of the test does not race Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(path), err)
	}
	return cmd, nil
}

// writeCredentials writes the service-account key pair and a static token
// file granting a fresh token cluster-admin, and returns the token.
func (e *Env) writeCredentials() (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", err
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	token := hex.EncodeToString(raw)
	files["tokens.csv"] = []byte(token + ",admin,admin-uid,system:masters\n")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(e.dir, name), data, 0o600); err != nil {
			return "", err
		}
	}
	return token, nil
}

// waitReady polls /readyz until it answers 200, a process exits, or three
// minutes pass (a start takes seconds on an idle machine, much longer on
// a loaded one).
func (e *Env) waitReady(ctx context.Context, host, token string) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		for _, c := range []*exec.Cmd{e.etcd, e.api} {
			if err := c.Process.Signal(syscall.Signal(0)); err != nil {
				return fmt.Errorf("%s exited; see %s", filepath.Base(c.Path), e.dir)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %w; logs in %s", ctx.Err(), e.dir)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends the API server, then etcd, and removes their directory. It is
// safe on a partly started Env.
func (e *Env) Stop() {
	for _, c := range []*exec.Cmd{e.api, e.etcd} {
		if c == nil || c.Process == nil {
			continue
		}
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(e.dir)
}

// freePorts returns n distinct free loopback ports. They are only free when
// checked; a clash with another process is unlikely, not impossible.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
