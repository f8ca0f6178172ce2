package main

import (
	"fmt"

	"github.com/meshd/meshd/bench/harness/workload"
	"github.com/meshd/meshd/krt"
)

// parallelism, when positive, is the graph's krt.WithParallelism (the
// -parallelism flag); 0 keeps krt's default.
var parallelism int

// churnWrites is how the churn phase writes (the -churn-writes flag):
// "sync" or "queued".
var churnWrites string

// handlerDelivery is how the endpoints handler is delivered (the
// -handler-delivery flag): "goroutine" (its own) or "inline"
// (krt.Inline, in the committing goroutine).
var handlerDelivery string

// deliveryOptions are the endpoints handler's options for handlerDelivery.
func deliveryOptions() []krt.RegisterOption {
	if handlerDelivery == "inline" {
		return []krt.RegisterOption{krt.Inline()}
	}
	return nil
}

// graph is the workload's dataflow: three inputs and two derived collections.
type graph struct {
	g         *krt.Graph
	services  krt.Static[workload.Service]
	pods      krt.Static[workload.Pod]
	mesh      krt.StaticSingleton[workload.MeshConfig]
	workloads krt.Collection[workload.Workload]
	endpoints krt.Collection[workload.Endpoints]
}

// newInputs creates the graph and its input collections, filled with svcs
// and pods (one transaction each; none when empty).
func newInputs(svcs []workload.Service, pods []workload.Pod) *graph {
	var opts []krt.GraphOption
	if parallelism > 0 {
		opts = append(opts, krt.WithParallelism(parallelism))
	}
	g := krt.NewGraph(opts...)
	gr := &graph{
		g:        g,
		services: krt.NewStatic[workload.Service](g, krt.WithName("Services")),
		pods:     krt.NewStatic[workload.Pod](g, krt.WithName("Pods")),
		mesh:     krt.NewStaticSingleton(g, &workload.MeshConfig{TrustDomain: "cluster.local"}, krt.WithName("MeshConfig")),
	}
	if len(svcs) > 0 {
		gr.services.Set(svcs...)
	}
	if len(pods) > 0 {
		gr.pods.Set(pods...)
	}
	return gr
}

// serviceLookup returns how a workload finds the services selecting its pod.
func (gr *graph) serviceLookup(mode string) (func(ctx krt.HandlerContext, p workload.Pod) []workload.Service, error) {
	switch mode {
	case "ns":
		// As Istio does: the pod's namespace plus a selector filter. krt
		// serves FilterSelects from its selector index and checks the
		// namespace on the candidates.
		return func(ctx krt.HandlerContext, p workload.Pod) []workload.Service {
			return krt.Fetch(ctx, gr.services, krt.FilterNamespace(p.Namespace), krt.FilterSelects(p.Labels))
		}, nil
	case "selector":
		// A finer, user-defined index keyed by "ns/key=value" per selector pair.
		bySel := krt.NewIndex(gr.services, "by-selector-pair", workload.SelectorPairs)
		return func(ctx krt.HandlerContext, p workload.Pod) []workload.Service {
			var res []workload.Service
			for k, v := range p.Labels {
				res = append(res, krt.Fetch(ctx, gr.services, krt.FilterIndex(bySel, workload.PairKey(p.Namespace, k, v)), krt.FilterSelects(p.Labels))...)
			}
			if len(p.Labels) > 1 { // several labels may hit the same service
				res = workload.Dedupe(res)
			}
			return res
		}, nil
	case "none":
		// Unindexed: a predicate over every service, O(N) per pod, and a
		// dependency on the whole service collection.
		return func(ctx krt.HandlerContext, p workload.Pod) []workload.Service {
			return krt.Fetch(ctx, gr.services, krt.FilterFunc(func(s workload.Service) bool { return workload.Selects(s.Selector, p.Labels) }))
		}, nil
	}
	return nil, fmt.Errorf("unknown -svc-lookup %q (want ns, selector or none)", mode)
}

// derive adds Workloads and Endpoints, computing them from the current inputs.
func (gr *graph) derive(svcLookup string) error {
	fetchServices, err := gr.serviceLookup(svcLookup)
	if err != nil {
		return err
	}
	gr.workloads = krt.NewCollection(gr.g, gr.pods, func(ctx krt.HandlerContext, p workload.Pod) *workload.Workload {
		mc, _ := krt.FetchOne(ctx, gr.mesh)
		svcs := fetchServices(ctx, p)
		w := workload.Derive(p, svcs, mc.TrustDomain)
		return &w
	}, krt.WithName("Workloads"))

	bySvc := krt.NewIndex(gr.workloads, "by-service", func(w workload.Workload) []string { return w.Services })
	gr.endpoints = krt.NewCollection(gr.g, gr.services, func(ctx krt.HandlerContext, s workload.Service) *workload.Endpoints {
		// Only the IPs are kept: FetchSeq copies no workload into a
		// slice, and the input's key is the service's name.
		ips := make([]string, 0, 16)
		for w := range krt.FetchSeq(ctx, gr.workloads, krt.FilterIndex(bySvc, ctx.Key())) {
			ips = append(ips, w.IP)
		}
		ep := workload.EndpointsOfIPs(ctx.Key(), ips)
		return &ep
	}, krt.WithName("Endpoints"))
	return nil
}
