// Package workload is the pods/services workload that bench/krt (meshd's
// krt), bench/istio-krt (Istio's krt) and bench/limit (plain maps) all
// derive, so that every engine is given identical inputs and held to
// identical outputs.
//
// The inputs are N [Service]s, svc-i in namespace ns-(i%10) selecting
// app=svc-i, M [Pod]s, pod-j backing service j%N at IP 10.x.y.z, and one
// [MeshConfig]. The outputs are one [Workload] per pod (the services
// selecting it and the trust domain) and one [Endpoints] per service (the
// sorted IPs of its pods). [Services] and [Pods] generate the inputs;
// [Verify] checks a set of outputs against a computation from scratch.
//
// An engine's handlers feed a [Tracker] (which expected IPs an Endpoints
// event has shown) and a [Counter] (how many workloads carry a trust
// domain) through [Observe] and [Count], which take the engine's own event
// type.
package workload
