package debugui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/meshd/meshd/krt"
)

func TestSensitiveKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"ISTIO_META_AUTH_TOKEN", true},
		{"token", true},
		{"apiKey", true},
		{"APIKey", true},
		{"X-Api-Key", true},
		{"DB_PASSWORD", true},
		{"clientSecret", true},
		{"AWS_CREDENTIALS", true},
		{"Authorization", true},
		{"session.cookie", true},
		{"PRIVATE_KEY", true},
		{"NAMESPACE", false},
		{"MONKEY", false},
		{"author", false},
		{"LABELS", false},
		{"CLUSTER_ID", false},
		{"keys", false},
		{"", false},
	} {
		if got := SensitiveKey(tc.key); got != tc.want {
			t.Errorf("SensitiveKey(%q) = %v, want %v (words %q)", tc.key, got, tc.want, words(tc.key))
		}
	}
}

func TestSecretValue(t *testing.T) {
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZXNoIn0.c2lnbmF0dXJl"
	for _, tc := range []struct {
		name, s string
		want    bool
	}{
		{"PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", true},
		{"PEM EC key inside text", "key: -----BEGIN EC PRIVATE KEY----- abc", true},
		{"JWT", jwt, true},
		{"JWT in a sentence", "rejected token " + jwt + " at 12:00", true},
		{"bearer header", "Bearer sk_live_4eC39HqLyjWDarjtT1", true},
		{"basic header", "Authorization: Basic dXNlcjpwYXNz", true},
		{"certificate is public", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", false},
		{"prose about basic auth", "basic authentication is not supported", false},
		{"prose about bearer tokens", "the bearer token is missing", false},
		{"plain value", "shop", false},
		{"cluster name", "outbound|9080||reviews.shop.svc.cluster.local", false},
	} {
		if got := SecretValue(tc.s); got != tc.want {
			t.Errorf("%s: SecretValue(%q) = %v, want %v", tc.name, tc.s, got, tc.want)
		}
	}
}

func TestRedactString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"auth failed: Bearer abc123xyz789 rejected", "auth failed: Bearer [redacted] rejected"},
		{"a -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- b", "a [redacted] b"},
		{"cut -----BEGIN RSA PRIVATE KEY-----\nMIIE", "cut [redacted]"},
		{"jwt eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0. end", "jwt [redacted] end"},
		{"nothing here", "nothing here"},
	} {
		if got := RedactString(tc.in); got != tc.want {
			t.Errorf("RedactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedactTree(t *testing.T) {
	in := map[string]any{
		"NAMESPACE":  "shop",
		"AUTH_TOKEN": "t0p",
		"nested": map[string]any{
			"password": "hunter2",
			"region":   "eu",
			"list":     []any{"plain", "Bearer abcdefgh1234", map[string]any{"apiKey": 42}},
		},
	}
	got := RedactTree(in).(map[string]any)
	want := map[string]any{
		"NAMESPACE":  "shop",
		"AUTH_TOKEN": Redacted,
		"nested": map[string]any{
			"password": Redacted,
			"region":   "eu",
			"list":     []any{"plain", "Bearer " + Redacted, map[string]any{"apiKey": Redacted}},
		},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("RedactTree = %s\nwant          %s", gb, wb)
	}
	// The input is left alone.
	if in["AUTH_TOKEN"] != "t0p" || in["nested"].(map[string]any)["password"] != "hunter2" {
		t.Errorf("RedactTree modified its input: %v", in)
	}
}

// redactJSONCase is an item encodeItem must redact: what must not show,
// what must, and whether the encoding must stay exactly encodeValue's.
type redactJSONCase struct {
	name      string
	v         any
	hidden    []string // must not appear
	shown     []string // must appear
	unchanged bool     // encoded exactly as encodeValue does
}

var redactJSONCases = []redactJSONCase{
	{
		name: "unstructured Secret",
		v: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "db", "namespace": "shop", "annotations": map[string]any{
				lastApplied: `{"data":{"pw":"czNjcmV0"}}`, "owner": "team-a"}},
			"data":       map[string]any{"pw": "czNjcmV0"},
			"stringData": map[string]any{"user": "admin-marker"},
		}},
		hidden: []string{"czNjcmV0", "admin-marker"},
		shown:  []string{`"pw":"[redacted]"`, `"user":"[redacted]"`, `"name":"db"`, `"owner":"team-a"`, `"type":"Opaque"`},
	},
	{
		name: "typed Secret without TypeMeta, as informers return it",
		v: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: "shop"},
			Data: map[string][]byte{"tls.key": []byte("key-bytes-marker")}},
		hidden: []string{"a2V5LWJ5dGVzLW1hcmtlcg"}, // base64 of the key bytes
		shown:  []string{`"tls.key":"[redacted]"`, `"name":"tls"`},
	},
	{
		name: "env var and header named like a credential",
		v: map[string]any{"env": []any{
			map[string]any{"name": "DB_PASSWORD", "value": "hunter2"},
			map[string]any{"name": "LOG_LEVEL", "value": "debug"},
		}, "headers": []any{map[string]any{"key": "x-api-key", "value": "k-123"}}},
		hidden: []string{"hunter2", "k-123"},
		shown:  []string{`"DB_PASSWORD"`, `"debug"`, `"x-api-key"`},
	},
	{
		name: "inline private key in an Envoy-like config",
		v: map[string]any{"tlsCertificates": []any{map[string]any{
			"certificateChain": map[string]any{"filename": "/etc/certs/cert.pem"},
			"privateKey":       map[string]any{"inlineString": "whatever-marker"},
		}}, "tlsCertificateSdsSecretConfigs": []any{map[string]any{"name": "default"}}},
		hidden: []string{"whatever-marker"},
		shown:  []string{"/etc/certs/cert.pem", `"privateKey":"[redacted]"`, `"tlsCertificateSdsSecretConfigs":[{"name":"default"}]`},
	},
	{
		name:      "nothing to redact keeps the encoding",
		v:         map[string]any{"b": 1, "a": "key material? no: just a label", "n": json.Number("18446744073709551615")},
		shown:     []string{"18446744073709551615"},
		unchanged: true,
	},
}

func TestRedactJSON(t *testing.T) {
	for _, tc := range redactJSONCases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(encodeItem(tc.v))
			if !json.Valid([]byte(got)) {
				t.Fatalf("not JSON: %s", got)
			}
			for _, h := range tc.hidden {
				if strings.Contains(got, h) {
					t.Errorf("%q shown in %s", h, got)
				}
			}
			for _, s := range tc.shown {
				if !strings.Contains(got, s) {
					t.Errorf("%q missing from %s", s, got)
				}
			}
			if tc.unchanged && got != string(encodeValue(tc.v)) {
				t.Errorf("re-encoded %s, want %s", got, encodeValue(tc.v))
			}
		})
	}
}

// The markers newLeakyHandler plants in what the API shows; none may be
// shown.
const (
	secretMarker = "c2VjcmV0LW1hcmtlcg"
	tokenMarker  = "tok-marker-7f3a"
	panicJWT     = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwYW5pYyJ9.c2ln"
)

// newLeakyHandler returns a handler whose every data source holds a
// credential: a Secret's data, a collection that panics with a JWT, proxy
// metadata and a NACK reason, and a problem quoting a private key.
func newLeakyHandler() *Handler {
	g := krt.NewGraph()
	objs := krt.NewStatic[*unstructured.Unstructured](g, krt.WithName("unstructured"),
		krt.WithKey(func(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }))
	objs.Set(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "shop"},
		"data":     map[string]any{"token": secretMarker},
	}})
	// A transformation that fails with a credential in its message.
	krt.NewCollection(g, objs, func(ctx krt.HandlerContext, u *unstructured.Unstructured) *fxNamed {
		panic("cannot parse " + panicJWT)
	}, krt.WithName("failing"))

	proxies := newFakeProxies(time.Now())
	ps := proxies.Proxies()
	ps[0].Metadata = map[string]string{"NAMESPACE": "shop", "AUTH_TOKEN": tokenMarker, "hint": "Bearer " + tokenMarker}
	ps[1].Types[0].LastNACK.Reason = "bad header value " + panicJWT
	proxies.set(ps)
	problems := fakeProblems{{Source: "secret.yaml", Error: "line 3: -----BEGIN PRIVATE KEY----- is not a string"}}
	return New(g, WithProxies(proxies), WithProblems(problems))
}

// TestAPIRedacts checks every route that shows data from outside: items,
// explain, proxies, config dumps, problems, collection errors.
func TestAPIRedacts(t *testing.T) {
	h := newLeakyHandler()
	bodies := map[string]string{}
	for _, path := range []string{
		"/debug/api/graph",
		"/debug/api/collections/unstructured",
		"/debug/api/collections/unstructured/items",
		"/debug/api/collections/failing",
		"/debug/api/explain?key=" + url.QueryEscape("shop/creds"),
		"/debug/api/proxies",
		"/debug/api/problems",
	} {
		code, body := get(t, h, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		bodies[path] = string(body)
		for _, secret := range []string{secretMarker, tokenMarker, panicJWT, "PRIVATE KEY"} {
			if strings.Contains(string(body), secret) {
				t.Errorf("GET %s shows %q: %s", path, secret, body)
			}
		}
	}
	// Not vacuous: what is no secret is there.
	for path, want := range map[string]string{
		"/debug/api/collections/unstructured/items":               `"token":"[redacted]"`,
		"/debug/api/explain?key=" + url.QueryEscape("shop/creds"): `"name":"creds"`,
		"/debug/api/proxies":                                      `"NAMESPACE":"shop"`,
		"/debug/api/problems":                                     `"source":"secret.yaml"`,
		"/debug/api/collections/failing":                          `"error":"panic: cannot parse [redacted]"`,
	} {
		if !strings.Contains(bodies[path], want) {
			t.Errorf("GET %s lacks %s: %s", path, want, bodies[path])
		}
	}
}
