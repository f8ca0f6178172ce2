package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/meshd/meshd/cmd/meshd/internal/remotesecret"
)

// runCreateRemoteSecret is `meshd create-remote-secret`: it makes the
// remote cluster's read-only service account and prints the Secret to
// apply in the primary cluster. It returns the exit code.
func runCreateRemoteSecret(args []string, out, errOut io.Writer) int {
	fs := pflag.NewFlagSet("create-remote-secret", pflag.ContinueOnError)
	fs.SetOutput(errOut)
	var o remotesecret.Options
	var kubeconfig string
	fs.StringVar(&o.Cluster, "name", "", "`NAME` of the remote cluster in the mesh (a DNS label)")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig `PATH` of the remote cluster, with the rights to create a ClusterRole, a service account and a binding")
	fs.StringVar(&o.Namespace, "namespace", "meshd-system", "`NAMESPACE` of the service account in the remote cluster and of the Secret in the primary")
	fs.DurationVar(&o.TokenTTL, "token-ttl", 365*24*time.Hour, "how long the service account's token is valid; run the command again to rotate it")
	fs.Usage = func() {
		fmt.Fprintln(errOut, "usage: meshd create-remote-secret --name NAME --kubeconfig PATH | kubectl apply -f - (in the primary cluster)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(errOut, "meshd create-remote-secret: %v\n", err)
		return 2
	}
	if o.Cluster == "" || kubeconfig == "" {
		fmt.Fprintln(errOut, "meshd create-remote-secret: --name and --kubeconfig are required")
		return 2
	}
	if err := createRemoteSecret(kubeconfig, o, out); err != nil {
		fmt.Fprintf(errOut, "meshd create-remote-secret: %v\n", err)
		return 1
	}
	return 0
}

func createRemoteSecret(kubeconfig string, o remotesecret.Options, out io.Writer) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	ca := rc.CAData
	if len(ca) == 0 && rc.CAFile != "" {
		if ca, err = os.ReadFile(rc.CAFile); err != nil {
			return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := remotesecret.Create(ctx, remotesecret.Remote{Client: client, Server: rc.Host, CAData: ca, Insecure: rc.Insecure}, o)
	if err != nil {
		return err
	}
	b, err := remotesecret.YAML(s)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}
