package main

import (
	"fmt"

	"istio.io/istio/pkg/kube/krt"

	"github.com/meshd/meshd/bench/harness/workload"
)

// graph is the workload's dataflow on Istio's krt: three inputs and two
// derived collections, all stopped by closing stop.
type graph struct {
	stop      chan struct{}
	services  krt.StaticCollection[workload.Service]
	pods      krt.StaticCollection[workload.Pod]
	mesh      krt.StaticSingleton[workload.MeshConfig]
	workloads krt.Collection[workload.Workload]
	endpoints krt.Collection[workload.Endpoints]
}

// newInputs creates the input collections, holding svcs and pods.
func newInputs(svcs []workload.Service, pods []workload.Pod) *graph {
	stop := make(chan struct{})
	return &graph{
		stop:     stop,
		services: krt.NewStaticCollection(nil, svcs, krt.WithName("Services"), krt.WithStop(stop)),
		pods:     krt.NewStaticCollection(nil, pods, krt.WithName("Pods"), krt.WithStop(stop)),
		mesh:     krt.NewStatic(&workload.MeshConfig{TrustDomain: "cluster.local"}, true, krt.WithName("MeshConfig"), krt.WithStop(stop)),
	}
}

// serviceLookup returns how a workload finds the services selecting its
// pod, for -svc-lookup.
func (gr *graph) serviceLookup(mode string) (func(ctx krt.HandlerContext, p workload.Pod) []workload.Service, error) {
	switch mode {
	case "ns":
		// As Istio's own controllers do: a namespace index, then a
		// selector filter over the namespace's services.
		byNS := krt.NewNamespaceIndex(gr.services)
		return func(ctx krt.HandlerContext, p workload.Pod) []workload.Service {
			return krt.Fetch(ctx, gr.services, krt.FilterIndex(byNS, p.Namespace), krt.FilterSelects(p.Labels))
		}, nil
	case "selector":
		// A finer index keyed by "ns/key=value" per selector pair.
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
		// Unindexed: a predicate over every service.
		return func(ctx krt.HandlerContext, p workload.Pod) []workload.Service {
			return krt.Fetch(ctx, gr.services, krt.FilterGeneric(func(o any) bool { return workload.Selects(o.(workload.Service).Selector, p.Labels) }))
		}, nil
	}
	return nil, fmt.Errorf("-svc-lookup %q: want ns, selector or none", mode)
}

// derive adds Workloads and Endpoints; Istio computes them asynchronously,
// so the caller waits for them to sync.
func (gr *graph) derive(svcLookup string) error {
	fetchServices, err := gr.serviceLookup(svcLookup)
	if err != nil {
		return err
	}
	mesh := gr.mesh.AsCollection()
	gr.workloads = krt.NewCollection(gr.pods, func(ctx krt.HandlerContext, p workload.Pod) *workload.Workload {
		mc := krt.FetchOne(ctx, mesh)
		svcs := fetchServices(ctx, p)
		domain := ""
		if mc != nil {
			domain = mc.TrustDomain
		}
		w := workload.Derive(p, svcs, domain)
		return &w
	}, krt.WithName("Workloads"), krt.WithStop(gr.stop))

	bySvc := krt.NewIndex(gr.workloads, "by-service", func(w workload.Workload) []string { return w.Services })
	gr.endpoints = krt.NewCollection(gr.services, func(ctx krt.HandlerContext, s workload.Service) *workload.Endpoints {
		wls := krt.Fetch(ctx, gr.workloads, krt.FilterIndex(bySvc, s.ResourceName()))
		ep := workload.EndpointsOf(s, wls)
		return &ep
	}, krt.WithName("Endpoints"), krt.WithStop(gr.stop))
	return nil
}

// waitSynced waits until both derived collections have processed their
// initial state.
func (gr *graph) waitSynced() bool {
	return gr.workloads.WaitUntilSynced(gr.stop) && gr.endpoints.WaitUntilSynced(gr.stop)
}
