package kube

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/security"
	"github.com/meshd/meshd/sources/kube/kubetest"
)

// token requests a bound token of ns/sa for audience.
func token(t *testing.T, c kubernetes.Interface, ns, sa, audience string) string {
	t.Helper()
	tr, err := c.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{Audiences: []string{audience}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func TestTokenReview(t *testing.T) {
	c, env := newClient(t)
	ns := namespace(t, c, "a", "b")
	r := NewTokenReviewer(c)
	ctx := context.Background()
	id, err := r.Authenticate(ctx, token(t, c, ns, "a", DefaultAudience))
	if err != nil {
		t.Fatal(err)
	}
	if id != (security.Identity{Namespace: ns, ServiceAccount: "a"}) {
		t.Fatalf("token of %s/a authenticated as %s", ns, id)
	}
	cases := []struct {
		name, token string
		want        error
	}{
		{"another audience", token(t, c, ns, "a", "some-other-service"), security.ErrUnknownToken},
		{"garbage", "eyJnot.a.jwt", security.ErrUnknownToken},
		{"spaces", "two words", security.ErrMalformedToken},
		{"expired", expiredToken(t, env, ns, "a"), security.ErrExpiredToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := r.Authenticate(ctx, tc.token); !errors.Is(err, tc.want) {
				t.Fatalf("Authenticate: %v, want %v", err, tc.want)
			}
		})
	}
}

// expiredToken mints a token of ns/sa for DefaultAudience, signed with
// the API server's own key, that expired a minute ago.
func expiredToken(t *testing.T, env *kubetest.Env, ns, sa string) string {
	t.Helper()
	data, err := os.ReadFile(env.ServiceAccountKeyFile())
	if err != nil {
		t.Fatal(err)
	}
	key, err := security.ParseKey(data)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := map[string]any{
		"iss": kubetest.ServiceAccountIssuer, "sub": "system:serviceaccount:" + ns + ":" + sa,
		"aud": []string{DefaultAudience}, "iat": now.Add(-time.Hour).Unix(), "nbf": now.Add(-time.Hour).Unix(),
		"exp":           now.Add(-time.Minute).Unix(),
		"kubernetes.io": map[string]any{"namespace": ns, "serviceaccount": map[string]string{"name": sa}},
	}
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}
