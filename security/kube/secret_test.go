package kube

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/security"
)

var td = spiffeid.RequireTrustDomainFromString("cluster.local")

// TestReplicasShareOneRoot starts replicas at once on an empty cluster,
// each with a client of its own: one Secret is created and every replica
// signs with its root, also after a restart.
func TestReplicasShareOneRoot(t *testing.T) {
	c, env := newClient(t)
	ns := namespace(t, c)
	replicas := make([]*security.Authority, 3)
	errs := make([]error, len(replicas))
	var wg sync.WaitGroup
	for i := range replicas {
		client, err := kubernetes.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = security.NewAuthority(NewSecretStore(client, ns, "meshd-ca"), td)
		wg.Go(func() { errs[i] = replicas[i].Init(context.Background()) })
	}
	wg.Wait()
	for i, r := range replicas {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		if !r.View().Signer.Cert.Equal(replicas[0].View().Signer.Cert) {
			t.Fatalf("replica %d signs with another root", i)
		}
	}
	sec, err := c.CoreV1().Secrets(ns).Get(context.Background(), "meshd-ca", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if bundle, err := security.ParseCerts(sec.Data[security.BundleFile]); err != nil || !bundle[0].Equal(replicas[0].View().Signer.Cert) {
		t.Fatalf("the Secret's %s does not hold the root: %v", security.BundleFile, err)
	}
	restarted := security.NewAuthority(NewSecretStore(c, ns, "meshd-ca"), td)
	if err := restarted.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !restarted.View().Signer.Cert.Equal(replicas[0].View().Signer.Cert) {
		t.Fatal("a restarted replica signs with another root")
	}
}

// TestRotationReachesEveryReplica rotates on one replica; the other sees
// both roots at its next round, and a rotation it tries from the stale
// state loses.
func TestRotationReachesEveryReplica(t *testing.T) {
	c, _ := newClient(t)
	ns := namespace(t, c)
	ctx := context.Background()
	a := security.NewAuthority(NewSecretStore(c, ns, "meshd-ca"), td)
	b := security.NewAuthority(NewSecretStore(c, ns, "meshd-ca"), td)
	for _, r := range []*security.Authority{a, b} {
		if err := r.Init(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Rotate(ctx); !errors.Is(err, security.ErrConflict) {
		t.Fatalf("a rotation from a stale state: %v, want ErrConflict", err)
	}
	if err := b.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	if v := b.View(); v.Phase != security.PhaseTrustNew || len(v.Bundle) != 2 {
		t.Fatalf("the other replica: phase %s, %d roots", v.Phase, len(v.Bundle))
	}
}
