package ctl

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
)

func runProxies(args []string, out io.Writer) error {
	var c common
	if _, err := parse("proxies", args, out, &c, nil); err != nil {
		return err
	}
	var r debugui.ProxiesResult
	if err := getJSON(c.addr, "proxies", nil, &r); err != nil {
		return err
	}
	if c.output == "json" {
		return writeJSON(out, r)
	}
	if !r.Available {
		_, err := fmt.Fprintln(out, "this meshd runs no xDS server")
		return err
	}
	return writeProxies(out, r.Proxies, time.Now())
}

// writeProxies writes one line per proxy; for a disconnected one why it
// closed; its earlier connections, if it reconnected; then one line per
// type it subscribed to, with the versions sent and acknowledged, the
// names subscribed and the last NACK's reason.
func writeProxies(out io.Writer, ps []debugui.ProxyEntry, now time.Time) error {
	if len(ps) == 0 {
		_, err := fmt.Fprintln(out, "no proxies")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tVERDICT\tSTATE\tPROTOCOL\tADDRESS\tSINCE")
	for _, p := range ps {
		since := p.ConnectedSince
		if p.State == debugui.ProxyDisconnected {
			since = p.DisconnectedAt
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.NodeID, p.Verdict, p.State, p.Protocol, p.Address, ago(since, now))
		if p.State == debugui.ProxyDisconnected {
			fmt.Fprintf(tw, "  closed\t%s\n", closeLine(p.CloseReason, p.CloseError))
		}
		for i, h := range p.History {
			label := ""
			if i == 0 {
				label = "earlier"
			}
			fmt.Fprintf(tw, "  %s\t%s, ended %s (%s %s)\n", label, closeLine(h.CloseReason, h.CloseError), ago(h.DisconnectedAt, now), h.Protocol, h.Address)
		}
		for _, t := range p.Types {
			fmt.Fprintf(tw, "  %s\t%s\n", shortType(t.TypeURL), typeLine(t))
		}
	}
	return tw.Flush()
}

// typeLine describes a proxy's state for one type.
func typeLine(t debugui.TypeStatus) string {
	s := fmt.Sprintf("sent %s, acked %s", orDash(t.SentVersion), orDash(t.AckedVersion))
	if t.Wildcard {
		s += ", wildcard"
	}
	if n := len(t.Subscribed); n > 0 {
		s += fmt.Sprintf(", %d names: %s", n, nameList(t.Subscribed, maxNamesShown))
	}
	if n := t.LastNACK; n != nil {
		s += fmt.Sprintf(", NACK of %s: %s", orDash(n.Version), n.Reason)
	}
	return s
}

// maxNamesShown is how many subscribed names a type's line lists; -o
// json has them all.
const maxNamesShown = 8

// nameList joins names, the first max of them and how many more.
func nameList(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, " ")
	}
	return fmt.Sprintf("%s … (%d more)", strings.Join(names[:max], " "), len(names)-max)
}

// closeLine says why a stream closed, with its error, if any.
func closeLine(reason, err string) string {
	if reason == "" {
		reason = "unknown"
	}
	if err != "" {
		return reason + ": " + err
	}
	return reason
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ago says how long before now t was, "-" for the zero time.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}
