package agent

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"time"
)

// ServerListenerTemplate is the name a gRPC xDS server asks its Listener
// by, with %s its listening address (ip:port).
const ServerListenerTemplate = "grpc/server?xds.resource.listening_address=%s"

// ProviderInstance is the certificate provider instance the bootstrap
// defines, which the xDS TLS contexts name.
const ProviderInstance = "default"

type bootstrap struct {
	XDSServers           []xdsServer               `json:"xds_servers"`
	Node                 node                      `json:"node"`
	CertificateProviders map[string]providerPlugin `json:"certificate_providers"`
	ListenerTemplate     string                    `json:"server_listener_resource_name_template"`
}

type xdsServer struct {
	ServerURI      string         `json:"server_uri"`
	ChannelCreds   []channelCreds `json:"channel_creds"`
	ServerFeatures []string       `json:"server_features"`
}

type channelCreds struct {
	Type   string         `json:"type"`
	Config map[string]any `json:"config,omitempty"`
}

type node struct {
	ID       string            `json:"id"`
	Metadata map[string]string `json:"metadata"`
}

type providerPlugin struct {
	PluginName string         `json:"plugin_name"`
	Config     map[string]any `json:"config"`
}

// protoDuration writes d as protobuf's JSON form of a Duration, which
// grpc-go parses: seconds with an "s" ("0.5s", "60s"), never Go's "1m0s".
func protoDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// bootstrapJSON returns the gRPC xDS bootstrap of c.
func bootstrapJSON(c *Config) ([]byte, error) {
	dir, err := filepath.Abs(c.OutDir)
	if err != nil {
		return nil, err
	}
	files := map[string]any{
		"certificate_file":    filepath.Join(dir, CertChainFile),
		"private_key_file":    filepath.Join(dir, KeyFile),
		"ca_certificate_file": filepath.Join(dir, RootCertFile),
		"refresh_interval":    protoDuration(c.RefreshInterval),
	}
	creds := channelCreds{Type: "insecure"}
	if c.XDSTLS || c.XDSCAFile != "" {
		tlsFiles := map[string]any{}
		for k, v := range files {
			tlsFiles[k] = v
		}
		if c.XDSCAFile != "" {
			tlsFiles["ca_certificate_file"] = c.XDSCAFile
		}
		creds = channelCreds{Type: "tls", Config: tlsFiles}
	}
	b := bootstrap{
		XDSServers: []xdsServer{{ServerURI: c.XDSAddr, ChannelCreds: []channelCreds{creds}, ServerFeatures: []string{"xds_v3"}}},
		Node: node{ID: c.NodeID, Metadata: map[string]string{
			"NAMESPACE": c.Namespace, "SERVICE_ACCOUNT": c.ServiceAccount,
		}},
		CertificateProviders: map[string]providerPlugin{ProviderInstance: {PluginName: "file_watcher", Config: files}},
		ListenerTemplate:     ServerListenerTemplate,
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
