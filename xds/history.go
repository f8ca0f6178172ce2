package xds

import (
	linked "container/list"
	"slices"
	"time"
)

// MaxSessions is how many ended streams the server remembers per node id
// (ProxyStatus.History).
const MaxSessions = 10

// Session is one ended stream of a node id: a proxy's earlier connection.
type Session struct {
	// ID is the stream's ID (see ConfigDump, which has it only while the
	// stream is retained).
	ID             uint64      `json:"id"`
	Kind           StreamKind  `json:"kind"`
	Peer           string      `json:"peer,omitempty"`
	ConnectedAt    time.Time   `json:"connectedAt"`
	DisconnectedAt time.Time   `json:"disconnectedAt"`
	CloseReason    CloseReason `json:"closeReason"`
	CloseError     string      `json:"closeError,omitempty"`
}

// histories keeps the last MaxSessions ended streams of each node id, for
// at most max node ids: past that, the node id whose last stream ended
// longest ago is forgotten first, connected or not. A record is a few
// short strings, unlike a retained stream, which holds its names. The
// zero value keeps nothing; the server's registry lock guards it.
type histories struct {
	max    int
	byNode map[string]*linked.Element // of *nodeHistory
	// order holds the node ids by when their last stream ended, the
	// oldest at the front.
	order linked.List
}

type nodeHistory struct {
	node string
	// sessions are newest first.
	sessions []Session
}

func newHistories(max int) *histories {
	return &histories{max: max, byNode: map[string]*linked.Element{}}
}

// add records the ended stream s of node; an empty node id is no proxy's
// and is not recorded.
func (h *histories) add(node string, s Session) {
	if node == "" || h.max <= 0 {
		return
	}
	e := h.byNode[node]
	if e == nil {
		e = h.order.PushBack(&nodeHistory{node: node})
		h.byNode[node] = e
	} else {
		h.order.MoveToBack(e)
	}
	nh := e.Value.(*nodeHistory)
	nh.sessions = slices.Insert(nh.sessions, 0, s)
	if len(nh.sessions) > MaxSessions {
		nh.sessions = nh.sessions[:MaxSessions]
	}
	for h.order.Len() > h.max {
		oldest := h.order.Front()
		h.order.Remove(oldest)
		delete(h.byNode, oldest.Value.(*nodeHistory).node)
	}
}

// of returns node's ended streams but the one whose ID is except, newest
// first; nil for none.
func (h *histories) of(node string, except uint64) []Session {
	e := h.byNode[node]
	if e == nil {
		return nil
	}
	var out []Session
	for _, s := range e.Value.(*nodeHistory).sessions {
		if s.ID != except {
			out = append(out, s)
		}
	}
	return out
}
