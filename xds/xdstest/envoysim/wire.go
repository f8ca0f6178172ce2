package envoysim

import (
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"

	"github.com/meshd/meshd/xds/xdstest"
)

// wire is one ADS stream, over either protocol, as the proxy uses it.
type wire interface {
	send(request)
	// next returns the next response, or the error that ended the
	// stream, or ok false when wake fires first.
	next(wake <-chan time.Time) (r *response, err error, ok bool)
	close()
}

// stream is a wire over an xdstest.Stream; to and from translate.
type stream[Req, Resp any] struct {
	s    *xdstest.Stream[Req, Resp]
	to   func(request) *Req
	from func(*Resp) *response
}

func (w *stream[Req, Resp]) send(r request) { w.s.Send(w.to(r)) }
func (w *stream[Req, Resp]) close()         { w.s.Close() }

func (w *stream[Req, Resp]) next(wake <-chan time.Time) (*response, error, bool) {
	select {
	case r, ok := <-w.s.Responses():
		if !ok {
			return nil, w.s.Ended(), true
		}
		return w.from(r), nil, true
	case <-wake:
		return nil, nil, false
	}
}

func errorDetail(nack string) *status.Status {
	if nack == "" {
		return nil
	}
	return &status.Status{Code: int32(codes.InvalidArgument), Message: nack}
}

// sotwRequest is r as Envoy sends it on SotW: always the whole list of
// names, the version last accepted and the last nonce of the type.
func sotwRequest(r request) *discovery.DiscoveryRequest {
	return &discovery.DiscoveryRequest{TypeUrl: r.typeURL, VersionInfo: r.version, ResponseNonce: r.nonce,
		ResourceNames: r.names, ErrorDetail: errorDetail(r.nack)}
}

// deltaRequest is r as Envoy sends it on Delta: an ACK or NACK names the
// response's nonce, a subscription change carries none.
func deltaRequest(r request) *discovery.DeltaDiscoveryRequest {
	d := &discovery.DeltaDiscoveryRequest{TypeUrl: r.typeURL, ResourceNamesSubscribe: r.subscribe,
		ResourceNamesUnsubscribe: r.unsubscribe, InitialResourceVersions: r.initial}
	if r.answer {
		d.ResponseNonce, d.ErrorDetail = r.nonce, errorDetail(r.nack)
		d.ResourceNamesSubscribe, d.ResourceNamesUnsubscribe = nil, nil
	}
	return d
}

func sotwResponse(r *discovery.DiscoveryResponse) *response {
	out := &response{typeURL: r.GetTypeUrl(), version: r.GetVersionInfo(), nonce: r.GetNonce()}
	for _, a := range r.GetResources() {
		out.resources = append(out.resources, wireResource{any: a})
	}
	return out
}

func deltaResponse(r *discovery.DeltaDiscoveryResponse) *response {
	out := &response{typeURL: r.GetTypeUrl(), version: r.GetSystemVersionInfo(), nonce: r.GetNonce(), removed: r.GetRemovedResources()}
	for _, res := range r.GetResources() {
		out.resources = append(out.resources, wireResource{name: res.GetName(), version: res.GetVersion(), any: res.GetResource()})
	}
	return out
}
