package xds

import (
	"errors"
	"fmt"
	"strings"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
)

// request sends a stream one request, built from the command as a client
// would, and flushes it as the stream's loop does after each request.
//
// ack and nack answer the last response of the type: ack with its nonce
// and version, nack=MSG with its nonce, the version last ACKed (as Envoy
// does) and the error MSG. A SotW answer without names= repeats the names
// of the type's last request, as SotW clients do. version=@OTHER is the
// version stream OTHER last ACKed of the type: what a client moving from
// OTHER's server names. In initial=, a version "current" is the cache's.
func (h *harness) request(c command) (string, error) {
	if len(c.args) < 2 {
		return "", fmt.Errorf("usage: %s NAME TYPE ...", c.name)
	}
	st := h.streams[c.args[0]]
	if st == nil {
		return "", fmt.Errorf("no stream %s", c.args[0])
	}
	if st.ended {
		return "", fmt.Errorf("stream %s ended: it was refused", st.name)
	}
	if string(st.s.kind) != c.name {
		return "", fmt.Errorf("stream %s is %s", st.name, st.s.kind)
	}
	t := typeURL(c.args[1])
	var (
		in       step
		answered bool
	)
	if c.name == "sotw" {
		req, err := h.sotwRequest(st, t, c)
		if err != nil {
			return "", err
		}
		answered = st.s.sotwAnswer(req, h.now)
		in = func(s *session, v view, now time.Time) error { return s.sotw(req, v, now) }
	} else {
		req := h.deltaRequest(st, t, c)
		answered = st.s.deltaAnswer(req, h.now)
		in = func(s *session, v view, now time.Time) error { return s.delta(req, v, now) }
	}
	var out strings.Builder
	if answered {
		// Applied as the receiving goroutine does (ack.go), without a
		// flush; one now must owe nothing, or the stream would have
		// missed a response.
		in = nil
	}
	if n := h.flush(st, in, &out); answered && n > 0 {
		return "", fmt.Errorf("%s: a request applied as a pure answer left %d responses owed:\n%s", st.name, n, out.String())
	}
	return out.String(), nil
}

// answer returns the nonce, version and error detail of an ack or nack.
func (h *harness) answer(st *scripted, t string, c command) (nonce, version string, detail *status.Status) {
	last := st.last[t]
	if c.has("ack") {
		nonce, version = last.nonce, last.version
	}
	if msg, ok := c.kv["nack"]; ok {
		nonce, detail = last.nonce, &status.Status{Code: 3, Message: msg}
		if ts := st.s.types[t]; ts != nil {
			version = ts.ackedVersion
		}
	}
	if n, ok := c.kv["nonce"]; ok {
		nonce = n
	}
	return nonce, version, detail
}

func (h *harness) sotwRequest(st *scripted, t string, c command) (*discovery.DiscoveryRequest, error) {
	nonce, version, detail := h.answer(st, t, c)
	req := &discovery.DiscoveryRequest{TypeUrl: t, ResponseNonce: nonce, VersionInfo: version, ErrorDetail: detail}
	if names, ok := c.kv["names"]; ok {
		req.ResourceNames = list(names)
	} else if ts := st.s.types[t]; ts != nil && nonce != "" {
		req.ResourceNames = ts.lastNames
	}
	if v, ok := c.kv["version"]; ok {
		version = v
		if other, ok := strings.CutPrefix(v, "@"); ok {
			o := h.streams[other]
			if o == nil || o.s.types[t] == nil {
				return nil, fmt.Errorf("version=@%s: no such stream or type", other)
			}
			version = o.s.types[t].ackedVersion
		}
		req.VersionInfo = version
	}
	req.Node, st.node = st.node, nil
	return req, nil
}

func (h *harness) deltaRequest(st *scripted, t string, c command) *discovery.DeltaDiscoveryRequest {
	nonce, _, detail := h.answer(st, t, c)
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: t, ResponseNonce: nonce, ErrorDetail: detail,
		ResourceNamesSubscribe: list(c.kv["sub"]), ResourceNamesUnsubscribe: list(c.kv["unsub"])}
	if initial, ok := c.kv["initial"]; ok {
		req.InitialResourceVersions = map[string]string{}
		h.cache.read(func(v view) {
			for _, pair := range list(initial) {
				name, ver, _ := strings.Cut(pair, "=")
				if r := v.resources(t)[name]; ver == "current" && r != nil {
					ver = r.version
				}
				req.InitialResourceVersions[name] = ver
			}
		})
	}
	req.Node, st.node = st.node, nil
	return req
}

// list splits a comma-separated list; "" is none.
func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// flush applies in (nil: nothing) to the stream's session and flushes it
// under one view of the cache, as conn.run does, writes the events, the
// refusal and the responses, and returns how many responses it wrote.
func (h *harness) flush(st *scripted, in step, out *strings.Builder) int {
	var (
		updates []update
		err     error
	)
	h.cache.read(func(v view) {
		if in != nil {
			err = in(st.s, v, h.now)
		}
		if err == nil {
			updates = st.s.flush(v, h.now)
		}
		h.subs.apply(st, st.s.takeInterest())
	})
	for _, e := range st.s.takeEvents() {
		fmt.Fprintf(out, "%s: %s\n", st.name, e)
	}
	if err != nil {
		var pe *protocolError
		why := "?"
		if errors.As(err, &pe) {
			why = [...]string{refuseInvalid: "invalid", refuseLimit: "limit", refuseIdentity: "identity", refuseUnauthenticated: "unauthenticated"}[pe.why]
		}
		fmt.Fprintf(out, "%s: refused (%s): %v\n", st.name, why, err)
		st.ended = true // as the stream code ends the stream
		h.subs.remove(st, st.s)
	}
	for _, u := range updates {
		st.last[u.typeURL] = u
		fmt.Fprintf(out, "%s <- %s\n", st.name, renderUpdate(st.s.kind, u))
	}
	return len(updates)
}

// renderUpdate shows a response: type, version, nonce, resources (name:rev)
// and, in Delta, the names removed.
func renderUpdate(kind StreamKind, u update) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s version=%s nonce=%s [%s]", shortType(u.typeURL), shortVersion(u.version), u.nonce, renderResources(u.resources))
	if kind == Delta && len(u.removed) > 0 {
		fmt.Fprintf(&b, " removed=[%s]", strings.Join(u.removed, " "))
	}
	return b.String()
}

func renderResources(rs []*resource) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = renderResource(r)
	}
	return strings.Join(s, " ")
}

// renderResource shows a resource as name, name:rev, or, for a version a
// Delta client named that the server has no bytes of, name@version.
func renderResource(r *resource) string {
	m, err := r.message()
	if err != nil {
		return r.name + "!" + err.Error()
	}
	if m == nil {
		return r.name + "@" + r.version
	}
	if rev := revOf(m); rev != "" {
		return r.name + ":" + rev
	}
	return r.name
}
