package debugui

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"strings"
	"unicode"

	"github.com/meshd/meshd/krt"
)

// Redacted is what the debug UI shows in place of a secret.
const Redacted = "[redacted]"

// The debug UI shows data that came from outside meshd: items of the
// sources' collections (which may hold Kubernetes Secrets, kept as
// unstructured objects by the folder source), node metadata sent by
// proxies (where proxies put tokens and credentials), errors and NACK
// reasons. Everything it serves passes through the functions below, which
// replace what is, or looks like, a secret with Redacted:
//
//   - the values of data and stringData of a Kubernetes Secret (apiVersion
//     v1, kind Secret, or a value of the Go type k8s.io/api/core/v1.Secret),
//     and its last-applied-configuration annotation, which repeats them;
//   - credentials in any string, whatever its key (RedactString);
//   - in items and config dumps, values under a field whose name is a
//     credential's (privateKey, password, clientSecret, token, ...), and the
//     value of a name/value or key/value pair whose name is SensitiveKey
//     (a container's env var DB_PASSWORD, a header x-api-key);
//   - in node metadata, values under any SensitiveKey, at any depth.
//
// Key names are kept, so that one can tell that a secret is there.

// sensitiveWords are the words of a key that make it name a secret.
var sensitiveWords = map[string]bool{
	"token": true, "tokens": true, "secret": true, "secrets": true,
	"password": true, "passwords": true, "passwd": true, "pwd": true, "passphrase": true,
	"credential": true, "credentials": true, "cred": true, "creds": true,
	"auth": true, "authorization": true, "key": true, "apikey": true, "privatekey": true,
	"cookie": true, "jwt": true, "bearer": true,
}

// SensitiveKey reports whether a free-form key, such as a node metadata
// field, an environment variable or a header name, names a secret: one of
// its words is token, secret, password, passwd, pwd, passphrase,
// credential, cred, auth, authorization, key, apikey, cookie, jwt or
// bearer (or a plural). Words are split at any character that is not a
// letter or digit and where lower case turns upper ("apiKey" is api, key),
// so MONKEY or AUTHOR are not sensitive but ISTIO_META_AUTH_TOKEN is.
func SensitiveKey(k string) bool {
	for _, w := range words(k) {
		if sensitiveWords[w] {
			return true
		}
	}
	return false
}

// words splits k into lower-case words at non-alphanumerics and case
// changes: "X-Api-Key" and "apiKey" and "APIKey" all end in "key".
func words(k string) []string {
	var out []string
	rs := []rune(k)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// "apiKey": a lower letter before an upper one; "APIKey": an
			// upper letter starting a capitalized word after an acronym.
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return out
}

var (
	// pemPattern matches a PEM private key block, or its start when the
	// end is cut off.
	pemPattern = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	// jwtPattern matches a JSON Web Token: a base64url JSON header (which
	// starts with `{"`, hence "eyJ"), a payload and a signature, which is
	// empty for an unsigned token.
	jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// authPattern matches an HTTP Authorization credential; group 1 is
	// the scheme and its spaces, group 2 the credential.
	authPattern = regexp.MustCompile(`(?i)\b((?:bearer|basic)\s+)([A-Za-z0-9._~+/-]+=*)`)
)

// SecretValue reports whether s holds something that looks like a
// credential whatever it is stored under: a PEM private key, a JSON Web
// Token, or an HTTP Bearer or Basic credential (see credentialLike: prose
// such as "basic authentication" is not one).
func SecretValue(s string) bool { return RedactString(s) != s }

// RedactString returns s with every credential SecretValue would find
// replaced by Redacted, and the rest kept: "Bearer abc123xyz" becomes
// "Bearer [redacted]". The debug UI passes every string it shows from
// outside through it: item values, node metadata, error messages and
// stacks, NACK reasons, problems.
func RedactString(s string) string {
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = pemPattern.ReplaceAllLiteralString(s, Redacted)
	}
	if strings.Contains(s, "eyJ") {
		s = jwtPattern.ReplaceAllLiteralString(s, Redacted)
	}
	return authPattern.ReplaceAllStringFunc(s, func(m string) string {
		sm := authPattern.FindStringSubmatch(m)
		if credentialLike(sm[2]) {
			return sm[1] + Redacted
		}
		return m
	})
}

// credentialLike tells a credential after "Bearer " or "Basic " from a
// word: at least 20 characters, or at least 8 with a digit, a symbol or an
// upper-case letter past the first.
func credentialLike(tok string) bool {
	if len(tok) >= 20 {
		return true
	}
	if len(tok) < 8 {
		return false
	}
	return strings.ContainsFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) }) ||
		strings.ContainsFunc(tok[1:], unicode.IsUpper)
}

// RedactTree returns v, a tree of maps, slices and scalars such as
// encoding/json decodes or structpb.Struct.AsMap returns, with the value
// under every SensitiveKey replaced by Redacted, and every string passed
// through RedactString, at any depth. It does not modify v: what it changes, it
// copies. It is meant for free-form data like node metadata, where any key
// may be anything.
func RedactTree(v any) any {
	out, _ := redactTree(v, SensitiveKey)
	return out
}

// redactTree returns v with the values under keys that sensitive accepts
// replaced, and its strings passed through RedactString; changed says whether it replaced
// anything, in which case the maps and slices on the way are copies.
func redactTree(v any, sensitive func(string) bool) (out any, changed bool) {
	switch v := v.(type) {
	case string:
		r := RedactString(v)
		return r, r != v
	case map[string]any:
		var cp map[string]any
		set := func(k string, nv any) {
			if cp == nil {
				cp = make(map[string]any, len(v))
				for k2, v2 := range v {
					cp[k2] = v2
				}
			}
			cp[k] = nv
		}
		for k, val := range v {
			if sensitive(k) && val != nil {
				set(k, Redacted)
				continue
			}
			if nv, ch := redactTree(val, sensitive); ch {
				set(k, nv)
			}
		}
		if cp == nil {
			return v, false
		}
		return cp, true
	case []any:
		return redactEach(v, func(val any) (any, bool) { return redactTree(val, sensitive) })
	}
	return v, false
}

// redactEach passes every element of l through redact; it returns a copy
// holding what redact changed, or l itself and false when it changed nothing.
func redactEach(l []any, redact func(any) (any, bool)) (any, bool) {
	var cp []any
	for i, val := range l {
		if nv, ch := redact(val); ch {
			if cp == nil {
				cp = append([]any(nil), l...)
			}
			cp[i] = nv
		}
	}
	if cp == nil {
		return l, false
	}
	return cp, true
}

// credentialFields are the field names (lower case, without '_' and '-')
// whose values redactJSON replaces wherever they appear in an item or a
// config dump. It is narrower than SensitiveKey: items are structured, and
// fields such as an Envoy header's "key" or an SDS config's
// "tlsCertificateSdsSecretConfigs" are no secrets.
var credentialFields = map[string]bool{
	"privatekey": true, "password": true, "passwd": true, "passphrase": true,
	"clientsecret": true, "secretaccesskey": true, "apikey": true, "token": true,
	"accesstoken": true, "refreshtoken": true, "idtoken": true, "bearertoken": true,
	"authorization": true,
}

func credentialField(k string) bool {
	k = strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
	return credentialFields[k]
}

// redactTriggers are what an encoded value must contain, in lower case,
// for redactJSON to look into it at all; most items contain none.
var redactTriggers = [][]byte{
	[]byte("secret"), []byte("private key"), []byte("eyj"), []byte("bearer"), []byte("basic"),
	[]byte("token"), []byte("pass"), []byte("pwd"), []byte("cred"), []byte("auth"),
	[]byte("key"), []byte("cookie"), []byte("jwt"),
}

// lastApplied is the annotation kubectl apply stores the whole applied
// object in, a Secret's data included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// redactJSON returns b, an encoded item or config dump, with its secrets
// replaced by Redacted (see the list above). isSecret says that the top
// level is a Kubernetes Secret even if it does not say so itself (a typed
// Secret whose TypeMeta is empty, as informers return them). It returns b
// itself when there is nothing to redact, so that its field order stays.
func redactJSON(b json.RawMessage, isSecret bool) json.RawMessage {
	if !isSecret && !containsAny(bytes.ToLower(b), redactTriggers) {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // keep large integers exact when re-encoding
	var v any
	if err := dec.Decode(&v); err != nil {
		// Not JSON: encodeValue always returns JSON, so this cannot
		// happen; if it did, showing nothing is the safe answer.
		return json.RawMessage(`"` + Redacted + `"`)
	}
	out, changed := redactItem(v, isSecret)
	if !changed {
		return b
	}
	nb, err := json.Marshal(out)
	if err != nil {
		return json.RawMessage(`"` + Redacted + `"`)
	}
	return nb
}

// redactItem is redactTree for structured values: it also knows
// Kubernetes Secrets and name/value pairs, and redacts only
// credentialFields by name.
func redactItem(v any, isSecret bool) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		return redactItemFields(v, isSecret)
	case []any:
		return redactEach(v, func(val any) (any, bool) { return redactItem(val, false) })
	}
	return redactTree(v, credentialField)
}

// redactItemFields is redactItem for one object: a Secret's data, a
// sensitive name/value pair's value, credentialFields, and then every
// field's value in turn.
func redactItemFields(m map[string]any, isSecret bool) (any, bool) {
	cp := make(map[string]any, len(m))
	for k, val := range m {
		cp[k] = val
	}
	changed := false
	if isSecret || (m["kind"] == "Secret" && m["apiVersion"] == "v1") {
		changed = redactSecretData(m, cp)
	}
	changed = redactPairValue(m, cp) || changed
	for k, val := range cp {
		if val == Redacted {
			continue
		}
		if credentialField(k) && val != nil {
			cp[k], changed = Redacted, true
			continue
		}
		if nv, ch := redactItem(val, false); ch {
			cp[k], changed = nv, true
		}
	}
	if !changed {
		return m, false
	}
	return cp, true
}

// redactSecretData writes into cp, a copy of the Secret m, m's data and
// stringData with every value redacted, and its metadata with the
// lastApplied annotation (which holds the data too) redacted. It reports
// whether it changed anything.
func redactSecretData(m, cp map[string]any) bool {
	changed := false
	for _, f := range []string{"data", "stringData"} {
		if d, ok := m[f].(map[string]any); ok {
			rd := make(map[string]any, len(d))
			for k := range d {
				rd[k] = Redacted
			}
			cp[f], changed = rd, true
		} else if m[f] != nil {
			cp[f], changed = Redacted, true
		}
	}
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		return changed
	}
	an, ok := md["annotations"].(map[string]any)
	if !ok || an[lastApplied] == nil {
		return changed
	}
	nan := maps.Clone(an)
	nan[lastApplied] = Redacted
	nmd := maps.Clone(md)
	nmd["annotations"] = nan
	cp["metadata"] = nmd
	return true
}

// redactPairValue redacts, in cp, the value of m when m is a name/value
// pair (an env var, a header, a label selector term) whose name or key is
// a SensitiveKey. It reports whether it did.
func redactPairValue(m, cp map[string]any) bool {
	val, ok := m["value"]
	if !ok || val == nil || val == Redacted {
		return false
	}
	for _, nk := range []string{"name", "key"} {
		if n, ok := m[nk].(string); ok && SensitiveKey(n) {
			cp["value"] = Redacted
			return true
		}
	}
	return false
}

func containsAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// isKubeSecret reports whether v is a k8s.io/api/core/v1.Secret or a
// pointer to one, known by its type so that the debug UI need not import
// the Kubernetes API.
func isKubeSecret(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.Name() == "Secret" && t.PkgPath() == "k8s.io/api/core/v1"
}

// encodeItem encodes an item, explain value or config dump for the UI,
// with its secrets redacted.
func encodeItem(v any) json.RawMessage {
	return redactJSON(encodeValue(v), isKubeSecret(v))
}

// redactErrors returns a copy of errs with the credentials in their keys,
// messages and stacks (a panic's value may be anything) redacted.
func redactErrors(errs []krt.ErrorRecord) []krt.ErrorRecord {
	if errs == nil {
		return nil
	}
	out := make([]krt.ErrorRecord, len(errs))
	for i, e := range errs {
		e.Key, e.Error, e.Stack = RedactString(e.Key), RedactString(e.Error), RedactString(e.Stack)
		out[i] = e
	}
	return out
}

// redactProxy returns p with its metadata and NACK reasons redacted, on
// copies: whatever the Proxies implementation did, values under a
// SensitiveKey and SecretValue strings do not leave.
func redactProxy(p ProxyStatus) ProxyStatus {
	if p.Metadata != nil {
		md := make(map[string]string, len(p.Metadata))
		for k, v := range p.Metadata {
			if SensitiveKey(k) {
				v = Redacted
			}
			md[k] = RedactString(v)
		}
		p.Metadata = md
	}
	p.CloseError = RedactString(p.CloseError)
	if p.History != nil {
		h := make([]Session, len(p.History))
		for i, s := range p.History {
			s.CloseError = RedactString(s.CloseError)
			h[i] = s
		}
		p.History = h
	}
	types := make([]TypeStatus, len(p.Types))
	for i, t := range p.Types {
		if n := t.LastNACK; n != nil {
			nc := *n
			nc.Reason = RedactString(nc.Reason)
			t.LastNACK = &nc
		}
		types[i] = t
	}
	if p.Types != nil {
		p.Types = types
	}
	return p
}
