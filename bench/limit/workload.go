package main

import (
	"fmt"
	"strconv"
)

// service is an input: a named label selector in a namespace.
type service struct {
	name, namespace string
	selector        map[string]string
}

func (s service) key() string { return s.namespace + "/" + s.name }

// pod is an input: a labelled IP in a namespace.
type pod struct {
	name, namespace string
	labels          map[string]string
	ip              string
}

func (p pod) key() string { return p.namespace + "/" + p.name }

// workload is derived per pod.
type workload struct {
	name, namespace, ip string
	services            []string // keys of the services selecting the pod, sorted
	trustDomain         string
}

// endpoints is derived per service: the sorted IPs of its workloads.
type endpoints struct {
	service string
	ips     []string
}

// The generators match bench/krt's exactly: the same keys, labels and IPs.

func namespaceOf(svc int) string { return "ns-" + strconv.Itoa(svc%10) }
func serviceName(svc int) string { return "svc-" + strconv.Itoa(svc) }
func serviceKey(svc int) string  { return namespaceOf(svc) + "/" + serviceName(svc) }

func initialIP(j int) string {
	return fmt.Sprintf("10.%d.%d.%d", (j>>16)&255, (j>>8)&255, j&255)
}

func genServices(n int) []service {
	out := make([]service, n)
	for i := range out {
		out[i] = service{name: serviceName(i), namespace: namespaceOf(i), selector: map[string]string{"app": serviceName(i)}}
	}
	return out
}

func genPods(n, m int) []pod {
	out := make([]pod, m)
	for j := range out {
		s := j % n
		out[j] = pod{name: "pod-" + strconv.Itoa(j), namespace: namespaceOf(s), labels: map[string]string{"app": serviceName(s)}, ip: initialIP(j)}
	}
	return out
}
