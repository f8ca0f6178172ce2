package meshconfig

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// MeshConfig is the effective mesh-wide configuration. The zero value is
// not valid; start from Default and override.
type MeshConfig struct {
	// TrustDomain is the SPIFFE trust domain of workload identities.
	// Default "cluster.local".
	TrustDomain string `json:"trustDomain"`
	// RootNamespace is where mesh-wide security policies live: a
	// PeerAuthentication or AuthorizationPolicy without a selector in it
	// applies to every workload. Default "istio-system", as in Istio, so
	// existing manifests keep their meaning.
	RootNamespace string `json:"rootNamespace"`
	// DomainSuffix is the cluster DNS suffix in service hostnames
	// "<name>.<namespace>.svc.<suffix>". Default "cluster.local".
	DomainSuffix string `json:"domainSuffix"`
	// PushDebounce is how long the xDS server waits for more changes before
	// pushing. Default 100ms.
	PushDebounce Duration `json:"pushDebounce"`
	// PushDebounceMax caps how long a push may be delayed by a stream of
	// changes. Default 10s.
	PushDebounceMax Duration `json:"pushDebounceMax"`
	// DefaultLocality is the region/zone/subzone given to workloads whose
	// node has no topology labels. Default empty.
	DefaultLocality string `json:"defaultLocality,omitempty"`
	// OutboundTrafficPolicy is ALLOW_ANY (default) or REGISTRY_ONLY.
	OutboundTrafficPolicy string `json:"outboundTrafficPolicy"`
	// ConnectTimeout is the upstream connect timeout of generated clusters.
	// Default 10s.
	ConnectTimeout Duration `json:"connectTimeout"`
	// IngressClass is the Gateway/Ingress class meshd serves. Default "meshd".
	IngressClass string `json:"ingressClass,omitempty"`
	// ClusterTraffic is how clients spread over the endpoints of a
	// service that several clusters serve: Spread (default) over all of
	// them alike, or PreferLocal: the local cluster's endpoints first,
	// the remote clusters' only when the local ones are gone or failing
	// (a lower xDS priority).
	ClusterTraffic string `json:"clusterTraffic,omitempty"`
	// EgressGatewayHost, when set, routes traffic to unknown hosts through
	// that host. Default empty.
	EgressGatewayHost string `json:"egressGatewayHost,omitempty"`
}

// Outbound traffic policies.
const (
	AllowAny     = "ALLOW_ANY"
	RegistryOnly = "REGISTRY_ONLY"
)

// Cluster traffic policies (MeshConfig.ClusterTraffic).
const (
	Spread      = "spread"
	PreferLocal = "preferLocal"
)

// Default returns the configuration used when none is given.
func Default() MeshConfig {
	return MeshConfig{
		TrustDomain:           "cluster.local",
		DomainSuffix:          "cluster.local",
		RootNamespace:         "istio-system",
		PushDebounce:          Duration(100 * time.Millisecond),
		PushDebounceMax:       Duration(10 * time.Second),
		OutboundTrafficPolicy: AllowAny,
		ConnectTimeout:        Duration(10 * time.Second),
		IngressClass:          "meshd",
		ClusterTraffic:        Spread,
	}
}

// ResourceName implements krt.ResourceNamer; a mesh config is a singleton.
func (MeshConfig) ResourceName() string { return "meshconfig" }

// Validate reports every problem with c, joined.
func (c MeshConfig) Validate() error {
	var errs []error
	if c.TrustDomain == "" || strings.ContainsAny(c.TrustDomain, "/: ") {
		errs = append(errs, fmt.Errorf("trustDomain %q: must be a non-empty DNS-like name", c.TrustDomain))
	}
	if c.RootNamespace == "" || strings.ContainsAny(c.RootNamespace, "/: ") {
		errs = append(errs, fmt.Errorf("rootNamespace %q: must be a namespace name", c.RootNamespace))
	}
	if c.DomainSuffix == "" || strings.HasPrefix(c.DomainSuffix, ".") || strings.HasSuffix(c.DomainSuffix, ".") {
		errs = append(errs, fmt.Errorf("domainSuffix %q: must be a non-empty DNS suffix without leading or trailing dot", c.DomainSuffix))
	}
	if c.PushDebounce < 0 || c.PushDebounceMax < 0 {
		errs = append(errs, errors.New("pushDebounce and pushDebounceMax must not be negative"))
	}
	if c.PushDebounceMax > 0 && c.PushDebounce > c.PushDebounceMax {
		errs = append(errs, fmt.Errorf("pushDebounce %s exceeds pushDebounceMax %s", c.PushDebounce, c.PushDebounceMax))
	}
	if c.ClusterTraffic != Spread && c.ClusterTraffic != PreferLocal {
		errs = append(errs, fmt.Errorf("clusterTraffic %q: want %s or %s", c.ClusterTraffic, Spread, PreferLocal))
	}
	if c.OutboundTrafficPolicy != AllowAny && c.OutboundTrafficPolicy != RegistryOnly {
		errs = append(errs, fmt.Errorf("outboundTrafficPolicy %q: want %s or %s", c.OutboundTrafficPolicy, AllowAny, RegistryOnly))
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, fmt.Errorf("connectTimeout %s: must be positive", c.ConnectTimeout))
	}
	return errors.Join(errs...)
}

// Duration is a time.Duration written as a Go duration string ("100ms")
// in YAML and JSON.
type Duration time.Duration

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}
