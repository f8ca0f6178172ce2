package main

import (
	"fmt"
	"strconv"
)

// model is the mesh xds/internal/bench serves, as plain data: n services
// svc-i in namespace ns-(i%10) with one port 7070, and m pods, pod j
// backing service j%n at ips[j]. It is what a go-control-plane user
// rebuilds the snapshot from.
type model struct {
	n, m  int
	ips   []string
	fresh int
}

const port = 7070

func newModel(n, m int) *model {
	w := &model{n: n, m: m, ips: make([]string, m)}
	for j := range m {
		w.ips[j] = fmt.Sprintf("10.%d.%d.%d", (j>>16)&255, (j>>8)&255, j&255)
	}
	return w
}

// freshIP returns an address no pod had, 1xx.x.y.z, in the order
// xds/internal/bench draws them, so that both benches move the same pods
// to the same addresses.
func (w *model) freshIP() string {
	w.fresh++
	f := w.fresh
	return fmt.Sprintf("%d.%d.%d.%d", 100+(f>>24)%100, (f>>16)&255, (f>>8)&255, f&255)
}

// hostname is service i's cluster-local name.
func hostname(i int) string {
	return "svc-" + strconv.Itoa(i) + ".ns-" + strconv.Itoa(i%10) + ".svc.cluster.local"
}

// listenerName names service i's listener and its route configuration,
// the target a gRPC proxyless client dials.
func listenerName(i int) string { return hostname(i) + ":" + strconv.Itoa(port) }

// clusterName names service i's cluster and its load assignment, as
// meshd and Istio name outbound clusters.
func clusterName(i int) string { return "outbound|" + strconv.Itoa(port) + "||" + hostname(i) }

// podsOf returns the IPs of service i's pods, in pod order.
func (w *model) podsOf(i int) []string {
	out := make([]string, 0, w.m/w.n+1)
	for j := i; j < w.m; j += w.n {
		out = append(out, w.ips[j])
	}
	return out
}
