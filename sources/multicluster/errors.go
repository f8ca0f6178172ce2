package multicluster

import (
	"errors"
	"strings"
)

// ErrDuplicateName is reported when two origins (two Secrets, or a Secret
// and --remote-kubeconfig) name the same cluster: the origin that sorts
// first is used, the other ignored until the first goes.
var ErrDuplicateName = errors.New("multicluster: cluster named by two origins")

// joinErrors joins errs into one error whose message is one line.
func joinErrors(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
