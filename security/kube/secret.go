package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/security"
)

// SecretStore is a security.Store in one Secret, its data keys the state
// files.
type SecretStore struct {
	client          kubernetes.Interface
	namespace, name string
}

// NewSecretStore returns the store in Secret namespace/name.
func NewSecretStore(client kubernetes.Interface, namespace, name string) *SecretStore {
	return &SecretStore{client: client, namespace: namespace, name: name}
}

var _ security.Store = (*SecretStore)(nil)

// Load implements security.Store.
func (s *SecretStore) Load(ctx context.Context) (security.Stored, error) {
	sec, err := s.client.CoreV1().Secrets(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return security.Stored{}, security.ErrNoState
	}
	if err != nil {
		return security.Stored{}, fmt.Errorf("reading Secret %s/%s: %w", s.namespace, s.name, err)
	}
	return stored(sec), nil
}

// Create implements security.Store: it creates the Secret, or reads it
// when another replica created it first.
func (s *SecretStore) Create(ctx context.Context, files map[string][]byte) (security.Stored, error) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "meshd"}},
		Type: corev1.SecretTypeOpaque,
		Data: files,
	}
	created, err := s.client.CoreV1().Secrets(s.namespace).Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return s.Load(ctx)
	}
	if err != nil {
		return security.Stored{}, fmt.Errorf("creating Secret %s/%s: %w", s.namespace, s.name, err)
	}
	return stored(created), nil
}

// Update implements security.Store; the revision is the Secret's
// resourceVersion.
func (s *SecretStore) Update(ctx context.Context, rev string, files map[string][]byte) (security.Stored, error) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace, ResourceVersion: rev,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "meshd"}},
		Type: corev1.SecretTypeOpaque,
		Data: files,
	}
	updated, err := s.client.CoreV1().Secrets(s.namespace).Update(ctx, sec, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return security.Stored{}, security.ErrConflict
	}
	if err != nil {
		return security.Stored{}, fmt.Errorf("updating Secret %s/%s: %w", s.namespace, s.name, err)
	}
	return stored(updated), nil
}

func stored(sec *corev1.Secret) security.Stored {
	return security.Stored{Files: sec.Data, Revision: sec.ResourceVersion}
}
