package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/meshd/meshd/security"
)

// DefaultAudience is the audience meshd's CA asks tokens to be bound to.
const DefaultAudience = "meshd-ca"

// TokenReviewer is a security.Authenticator asking the API server.
type TokenReviewer struct {
	client    kubernetes.Interface
	audiences []string
}

// NewTokenReviewer returns an authenticator accepting service-account
// tokens bound to one of audiences (none: DefaultAudience).
func NewTokenReviewer(client kubernetes.Interface, audiences ...string) *TokenReviewer {
	if len(audiences) == 0 {
		audiences = []string{DefaultAudience}
	}
	return &TokenReviewer{client: client, audiences: audiences}
}

var _ security.Authenticator = (*TokenReviewer)(nil)

// serviceAccountPrefix starts a service account's user name.
const serviceAccountPrefix = "system:serviceaccount:"

// Authenticate implements security.Authenticator.
func (r *TokenReviewer) Authenticate(ctx context.Context, token string) (security.Identity, error) {
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return security.Identity{}, security.ErrMalformedToken
	}
	tr, err := r.client.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: r.audiences},
	}, metav1.CreateOptions{})
	if err != nil {
		return security.Identity{}, fmt.Errorf("%w: TokenReview: %v", security.ErrAuthUnavailable, err)
	}
	st := tr.Status
	if !st.Authenticated {
		return security.Identity{}, refusal(st.Error)
	}
	// The API server checked the audiences; a reviewer that ignored them
	// would answer with none of ours.
	if !slices.ContainsFunc(st.Audiences, func(a string) bool { return slices.Contains(r.audiences, a) }) {
		return security.Identity{}, fmt.Errorf("%w: bound to %v, want one of %v", security.ErrUnknownToken, st.Audiences, r.audiences)
	}
	return identityOf(st.User.Username)
}

// refusal classifies the API server's reason for not authenticating.
func refusal(reason string) error {
	if strings.Contains(reason, "expired") {
		return fmt.Errorf("%w: %s", security.ErrExpiredToken, reason)
	}
	return fmt.Errorf("%w: %s", security.ErrUnknownToken, reason)
}

// identityOf parses system:serviceaccount:<namespace>:<name>.
func identityOf(user string) (security.Identity, error) {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	ns, sa, ok2 := strings.Cut(rest, ":")
	id := security.Identity{Namespace: ns, ServiceAccount: sa}
	if !ok || !ok2 || id.Validate() != nil {
		return security.Identity{}, fmt.Errorf("%w: user %q is no service account", security.ErrUnknownToken, user)
	}
	return id, nil
}
