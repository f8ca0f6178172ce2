package multicluster

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"
)

// LabelSecret marks the Secrets in meshd's namespace that name remote
// clusters, with the value "true". Each data key of such a Secret is a
// cluster's name, its value that cluster's kubeconfig.
const LabelSecret = "meshd.io/multicluster"

// Cluster is a remote cluster to watch: its name, unique in the mesh, and
// the kubeconfig that reaches it (its current context is used).
type Cluster struct {
	Name       string
	Kubeconfig []byte
}

// ClustersOfSecret returns the clusters a Secret names, sorted by name.
// A key that is no valid cluster name, or whose value is no kubeconfig, is
// left out and reported in the error (the others are still returned), so
// one bad entry does not drop the Secret's good ones.
func ClustersOfSecret(s *corev1.Secret) ([]Cluster, error) {
	var out []Cluster
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.Data)) {
		if err := ValidateName(name); err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", name, err))
			continue
		}
		if _, err := clientcmd.Load(s.Data[name]); err != nil {
			errs = append(errs, fmt.Errorf("key %q: not a kubeconfig: %w", name, err))
			continue
		}
		out = append(out, Cluster{Name: name, Kubeconfig: s.Data[name]})
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, joinErrors(errs))
	}
	return out, nil
}

// ValidateName checks a cluster name: a DNS label (lower-case letters,
// digits and '-', at most 63 characters), since it becomes part of keys,
// collection names and the xDS locality.
func ValidateName(name string) error {
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return fmt.Errorf("cluster name %q: %s", name, msgs[0])
	}
	return nil
}
