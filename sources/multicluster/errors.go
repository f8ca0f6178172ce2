package multicluster

import (
	"errors"
	"strings"
)

// ErrDuplicateName is reported when two origins (two Secrets, or a Secret
// and --remote-kubeconfig) name the same cluster: the origin that sorts
// first is used, the other ignored until the first goes.
var ErrDuplicateName = errors.New("multicluster: cluster named by two origins")

// ErrLocalName is reported for a remote cluster that bears the local
// cluster's name (WithClusterName): it is not watched, and its state is
// StateFailed, since its endpoints could not be told from the local ones.
var ErrLocalName = errors.New("multicluster: remote cluster named as the local cluster")

// joinErrors joins errs into one error whose message is one line.
func joinErrors(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
