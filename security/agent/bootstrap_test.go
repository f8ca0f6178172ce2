package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	xdscreds "google.golang.org/grpc/credentials/xds"
	"google.golang.org/grpc/xds"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
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

// TestRefreshIntervalIsAProtoDuration: grpc-go parses the file_watcher's
// refresh_interval as protobuf JSON, which has no "ms" or "1m0s".
func TestRefreshIntervalIsAProtoDuration(t *testing.T) {
	for _, d := range []time.Duration{500 * time.Millisecond, time.Second, 90 * time.Second, time.Minute, 1500 * time.Microsecond} {
		s := protoDuration(d)
		var got durationpb.Duration
		if err := protojson.Unmarshal([]byte(`"`+s+`"`), &got); err != nil {
			t.Errorf("protoDuration(%s) = %q: not protobuf JSON: %v", d, s, err)
			continue
		}
		if got.AsDuration() != d {
			t.Errorf("protoDuration(%s) = %q, which reads back as %s", d, s, got.AsDuration())
		}
	}
}

// TestBootstrapChannelCreds checks the xDS server's channel credentials
// for each way of reaching it: insecure, TLS verified by the bundle the
// agent writes (meshd's certificate is from its CA), or by another file.
func TestBootstrapChannelCreds(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		tls      bool
		caFile   string
		wantType string
		wantCA   string
	}{
		{"plaintext", false, "", "insecure", ""},
		{"TLS from the mesh's bundle", true, "", "tls", filepath.Join(dir, RootCertFile)},
		{"TLS from another CA", true, "/etc/meshd/server-ca.pem", "tls", "/etc/meshd/server-ca.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{XDSAddr: "127.0.0.1:15010", OutDir: dir, XDSTLS: tt.tls, XDSCAFile: tt.caFile, RefreshInterval: time.Second}
			b, err := bootstrapJSON(&c)
			if err != nil {
				t.Fatal(err)
			}
			var got bootstrap
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			creds := got.XDSServers[0].ChannelCreds
			if len(creds) != 1 || creds[0].Type != tt.wantType {
				t.Fatalf("channel_creds %+v, want one of type %s", creds, tt.wantType)
			}
			if tt.wantType != "tls" {
				return
			}
			cfg := creds[0].Config
			if cfg["ca_certificate_file"] != tt.wantCA || cfg["certificate_file"] != filepath.Join(dir, CertChainFile) ||
				cfg["private_key_file"] != filepath.Join(dir, KeyFile) {
				t.Errorf("tls config %v: want the workload's files and CA %s", cfg, tt.wantCA)
			}
		})
	}
}
