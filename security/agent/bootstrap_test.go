package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	xdscreds "google.golang.org/grpc/credentials/xds"
	"google.golang.org/grpc/xds"
)

// TestBootstrapAcceptedByGRPC hands the agent's bootstrap to grpc-go's
// own xDS server constructor, which parses it and checks its listener
// template and certificate providers. grpc-go reads GRPC_XDS_BOOTSTRAP
// once per process, so the check runs in a child test process.
func TestBootstrapAcceptedByGRPC(t *testing.T) {
	caAddr, caTLS := startCA(t)
	dir, _ := runAgent(t, caAddr, caTLS, "server")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestBootstrapChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GRPC_XDS_BOOTSTRAP="+filepath.Join(dir, BootstrapFile), "MESHD_BOOTSTRAP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("grpc-go refuses the agent's bootstrap: %v\n%s", err, out)
	}
}

// TestBootstrapChild is TestBootstrapAcceptedByGRPC's child process.
func TestBootstrapChild(t *testing.T) {
	if os.Getenv("MESHD_BOOTSTRAP_CHILD") == "" {
		t.Skip("run by TestBootstrapAcceptedByGRPC")
	}
	creds, err := xdscreds.NewServerCredentials(xdscreds.ServerOptions{FallbackCreds: insecure.NewCredentials()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := xds.NewGRPCServer(grpc.Creds(creds))
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}
