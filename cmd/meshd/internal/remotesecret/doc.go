// Package remotesecret makes what a primary meshd needs to watch a remote
// cluster: in the remote cluster, a service account bound to the
// read-only ClusterRole meshd-remote-reader (deploy/), and a token for
// it; for the primary, a Secret labelled meshd.io/multicluster=true whose
// one key is the cluster's name and whose value is a kubeconfig with that
// token. `meshd create-remote-secret` prints the Secret.
package remotesecret
