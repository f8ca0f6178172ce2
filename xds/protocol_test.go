package xds

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestProtocol runs the protocol scripts, testdata/*.txt: each drives
// sessions (the pure protocol core) with requests and cache changes and
// checks the responses, events and state they produce. No socket, no
// goroutine: a script is one ADS rule, readable as a conversation.
//
// Commands (see the harness_*_test.go files):
//
//	server [isolate] [max-names=N] [anonymous=none|public|node] [warming=envoy]   configure, before any open
//	open NAME sotw|delta [ns=NS] [cert-ns=NS|anonymous] [agent=USER_AGENT]
//	cache                                   then lines: set TYPE NAME [rev=R] [vis=NS,..|vis=*,-NS,..]
//	                                                    delete TYPE NAME
//	sotw NAME TYPE [names=A,B|*] [version=V|version=@OTHER] [nonce=N] [ack] [nack=MSG]
//	delta NAME TYPE [sub=A,B] [unsub=C] [nonce=N] [ack] [nack=MSG] [initial=A=V,B=current]
//	state [NAME]
//	index                                   the streams each name's change is routed to
//
// TYPE is lds, rds, cds or eds, a full type URL, or - for none. A cache change is one
// batch: the streams the index routes it to (as the server's does) are
// told of it and flushed, as the server does with debounce off; a stream
// it concerns that the index leaves out fails the script.
func TestProtocol(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			h := newHarness(t)
			runScript(t, f, h.run)
		})
	}
}

// harness holds a script's cache and sessions.
type harness struct {
	t     *testing.T
	proto protocol
	cache *cache
	// subs routes a cache command's changes, as the server's does.
	subs    *subscribers[*scripted]
	streams map[string]*scripted
	// order holds the stream names in the order opened.
	order []string
	now   time.Time
}

// scripted is one stream of a script: its session and what the client
// would remember.
type scripted struct {
	name string
	s    *session
	// node goes with the first request, then is nil.
	node *core.Node
	// last is, per type URL, the last response received.
	last map[string]update
	// ended is set once a request was refused: the stream is over.
	ended bool
}

var scriptTypes = []string{ListenerType, RouteType, ClusterType, EndpointType}

func newHarness(t *testing.T) *harness {
	return &harness{
		t:       t,
		proto:   protocol{typeURLs: scriptTypes},
		cache:   newCache(scriptTypes, nil),
		subs:    newSubscribers[*scripted](),
		streams: map[string]*scripted{},
		now:     time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// run runs one command and returns its output. Each command moves the
// clock one second.
func (h *harness) run(c command) string {
	h.now = h.now.Add(time.Second)
	var out string
	var err error
	switch c.name {
	case "server":
		err = h.server(c)
	case "open":
		err = h.open(c)
	case "cache":
		out, err = h.change(c)
	case "sotw", "delta":
		out, err = h.request(c)
	case "state":
		out, err = h.state(c)
	case "index":
		out = renderIndex(h.subs, func(st *scripted) string { return st.name })
	default:
		err = fmt.Errorf("unknown command %q", c.name)
	}
	if err != nil {
		h.t.Fatalf("%s: %v", c.pos, err) // a broken script, not a protocol result
	}
	return out
}

// server configures the protocol: isolation by the node's namespace, and
// WithMaxSubscribedNames.
func (h *harness) server(c command) error {
	if len(h.streams) > 0 {
		return fmt.Errorf("server after open")
	}
	if c.has("isolate") {
		h.proto.namespaceOf = NodeNamespace
	}
	if v, ok := c.kv["anonymous"]; ok {
		a, known := map[string]Anonymous{"none": AnonymousNone, "public": AnonymousPublic, "node": AnonymousNodeClaim}[v]
		if !known {
			return fmt.Errorf("anonymous=%s: want none, public or node", v)
		}
		h.proto.anonymous = a
	}
	if v, ok := c.kv["variant"]; ok {
		// variant=TYPE:NAME[+NAME...] serves TYPE in variant NAME too,
		// to the streams opened with variant=NAME (named as their user
		// agent).
		t, names, _ := strings.Cut(v, ":")
		h.cache = newCache(scriptTypes, map[string][]string{typeURL(t): strings.Split(names, "+")})
		h.proto.variantOf = (*core.Node).GetUserAgentName
	}
	if v, ok := c.kv["warming"]; ok {
		// warming=envoy resends what updates warm on to Envoy only.
		if v != "envoy" {
			return fmt.Errorf("warming=%s: want envoy", v)
		}
		h.proto.warmingFor = EnvoyNode
	}
	if v, ok := c.kv["max-names"]; ok {
		if _, err := fmt.Sscan(v, &h.proto.maxNames); err != nil {
			return fmt.Errorf("max-names: %w", err)
		}
	}
	return nil
}

// open starts a stream whose node id is its name and, with ns, whose
// node names that namespace; cert-ns gives it a verified certificate
// naming a namespace (empty: naming none), anonymous none at all.
func (h *harness) open(c command) error {
	anonymous := len(c.args) == 3 && c.args[2] == "anonymous"
	if (len(c.args) != 2 && !anonymous) || (c.args[1] != "sotw" && c.args[1] != "delta") {
		return fmt.Errorf("usage: open NAME sotw|delta [anonymous]")
	}
	name := c.args[0]
	if h.streams[name] != nil {
		return fmt.Errorf("stream %s open already", name)
	}
	st := &scripted{name: name, s: newSession(&h.proto, StreamKind(c.args[1])), node: &core.Node{Id: name},
		last: map[string]update{}}
	if ns, ok := c.kv["ns"]; ok {
		st.node.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{NamespaceMetadataKey: structpb.NewStringValue(ns)}}
	}
	if v, ok := c.kv["variant"]; ok {
		st.node.UserAgentName = v
	}
	if v, ok := c.kv["agent"]; ok {
		st.node.UserAgentName = v
	}
	if ns, ok := c.kv["cert-ns"]; ok {
		st.s.certIdentity = true
		st.s.ns, st.s.nsOK = ns, ns != ""
	}
	if anonymous {
		// Under WithPeerNamespace, with no verified certificate.
		st.s.certIdentity, st.s.anonymous = true, true
	}
	h.streams[name] = st
	h.order = append(h.order, name)
	return nil
}

// typeURL reads a script's type: a short name, a URL, or "-" for none.
func typeURL(s string) string {
	if s == "-" {
		return ""
	}
	for _, t := range scriptTypes {
		if shortType(t) == s {
			return t
		}
	}
	return s
}
