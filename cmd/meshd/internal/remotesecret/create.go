package remotesecret

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/meshd/meshd/deploy"
	"github.com/meshd/meshd/sources/multicluster"
)

// ReaderName names the ClusterRole (deploy/26-clusterrole-remote-reader.yaml),
// the service account and the binding in the remote cluster.
const ReaderName = "meshd-remote-reader"

// Options say what to make.
type Options struct {
	// Cluster is the remote cluster's name in the mesh.
	Cluster string
	// Namespace holds the service account in the remote cluster, and the
	// Secret in the primary. Default: meshd-system.
	Namespace string
	// TokenTTL is how long the token is valid. Default: one year.
	TokenTTL time.Duration
}

// Remote is the cluster the service account is made in: a client, and
// how the primary reaches its API server.
type Remote struct {
	Client kubernetes.Interface
	// Server and CAData are the API server's URL and CA bundle, as in a
	// kubeconfig; Insecure skips verifying its certificate.
	Server   string
	CAData   []byte
	Insecure bool
}

// Create makes, or updates, the ClusterRole, service account and binding
// in the remote cluster, requests a token, and returns the Secret for the
// primary.
func Create(ctx context.Context, r Remote, o Options) (*corev1.Secret, error) {
	if err := multicluster.ValidateName(o.Cluster); err != nil {
		return nil, err
	}
	if o.Namespace == "" {
		o.Namespace = "meshd-system"
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = 365 * 24 * time.Hour
	}
	if err := ensureReader(ctx, r.Client, o.Namespace); err != nil {
		return nil, err
	}
	secs := int64(o.TokenTTL.Seconds())
	tr, err := r.Client.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, ReaderName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s/%s: %w", o.Namespace, ReaderName, err)
	}
	kubeconfig, err := readerKubeconfig(r, o.Cluster, tr.Status.Token)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "meshd-remote-" + o.Cluster, Namespace: o.Namespace,
			Labels: map[string]string{multicluster.LabelSecret: "true"}},
		Data: map[string][]byte{o.Cluster: kubeconfig},
	}, nil
}

// YAML returns s as a YAML manifest.
func YAML(s *corev1.Secret) ([]byte, error) {
	return yaml.Marshal(s)
}

func readerKubeconfig(r Remote, cluster, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cluster] = &clientcmdapi.Cluster{Server: r.Server, CertificateAuthorityData: r.CAData, InsecureSkipTLSVerify: r.Insecure}
	cfg.AuthInfos[ReaderName] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[cluster] = &clientcmdapi.Context{Cluster: cluster, AuthInfo: ReaderName}
	cfg.CurrentContext = cluster
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return b, nil
}

// ensureReader creates or updates the reader's ClusterRole (deploy's),
// namespace, service account and binding.
func ensureReader(ctx context.Context, c kubernetes.Interface, ns string) error {
	role, err := readerRole()
	if err != nil {
		return err
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = c.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("clusterrole %s: %w", ReaderName, err)
		}
	} else if err != nil {
		return fmt.Errorf("clusterrole %s: %w", ReaderName, err)
	}
	labels := role.Labels
	creates := []struct {
		what   string
		create func() error
	}{
		{"namespace " + ns, func() error {
			_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
			return err
		}},
		{"serviceaccount " + ns + "/" + ReaderName, func() error {
			_, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ReaderName, Namespace: ns, Labels: labels}}, metav1.CreateOptions{})
			return err
		}},
		{"clusterrolebinding " + ReaderName, func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: ReaderName, Labels: labels},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ReaderName},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ReaderName, Namespace: ns}},
			}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, step := range creates {
		if err := step.create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return nil
}

// readerRole is the ClusterRole of deploy/26-clusterrole-remote-reader.yaml.
func readerRole() (*rbacv1.ClusterRole, error) {
	data, err := deploy.FS.ReadFile("26-clusterrole-remote-reader.yaml")
	if err != nil {
		return nil, fmt.Errorf("the reader's ClusterRole: %w", err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		return nil, fmt.Errorf("the reader's ClusterRole: %w", err)
	}
	return &role, nil
}
