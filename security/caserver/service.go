package caserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	pb "istio.io/api/security/v1alpha1"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/meshd/meshd/security"
)

// Signer signs a checked request; *security.Authority implements it.
type Signer interface {
	Sign(security.Request) (security.Issued, error)
}

// Service is the IstioCertificateService. Create it with New; it is safe
// for concurrent use.
type Service struct {
	pb.UnimplementedIstioCertificateServiceServer

	ca          Signer
	auth        security.Authenticator
	trustDomain func() spiffeid.TrustDomain
	log         *slog.Logger

	issued  atomic.Uint64
	refused [numReasons]atomic.Uint64
}

// reasonIndex numbers the reasons for the counters.
var reasonIndex = func() map[Reason]int {
	m := map[Reason]int{}
	for i, r := range Reasons {
		m[r] = i
	}
	return m
}()

// Option configures a Service.
type Option func(*Service)

// WithLogger logs every refusal (reason, peer, identity when known) and,
// at debug, every certificate issued. Default: discard.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// New returns a service signing with ca for the callers auth
// authenticates, in the trust domain trustDomain returns at each call
// (the mesh config's, which may change).
func New(ca Signer, auth security.Authenticator, trustDomain func() spiffeid.TrustDomain, opts ...Option) *Service {
	s := &Service{ca: ca, auth: auth, trustDomain: trustDomain, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Register registers s on r, e.g. a *grpc.Server.
func (s *Service) Register(r grpc.ServiceRegistrar) { pb.RegisterIstioCertificateServiceServer(r, s) }

// Stats are a Service's counts since it was created.
type Stats struct {
	Issued  uint64
	Refused map[Reason]uint64
}

// Stats returns the counts of certificates issued and requests refused.
func (s *Service) Stats() Stats {
	st := Stats{Issued: s.issued.Load(), Refused: map[Reason]uint64{}}
	for i, r := range Reasons {
		st.Refused[r] = s.refused[i].Load()
	}
	return st
}

// CreateCertificate implements IstioCertificateServiceServer: it
// authenticates the caller by its token and signs its CSR for that
// identity only.
func (s *Service) CreateCertificate(ctx context.Context, req *pb.IstioCertificateRequest) (*pb.IstioCertificateResponse, error) {
	id, err := s.authenticate(ctx)
	if err != nil {
		return nil, s.refuse(ctx, err, spiffeid.ID{})
	}
	if req.GetValidityDuration() < 0 || req.GetValidityDuration() > maxValiditySeconds {
		return nil, s.refuse(ctx, fmt.Errorf("%w: validity_duration %d s", security.ErrBadValidity, req.GetValidityDuration()), id)
	}
	iss, err := s.ca.Sign(security.Request{CSR: []byte(req.GetCsr()), ID: id,
		TTL: time.Duration(req.GetValidityDuration()) * time.Second})
	if err != nil {
		return nil, s.refuse(ctx, err, id)
	}
	s.issued.Add(1)
	s.log.Debug("certificate issued", "identity", id.String(), "expires", iss.Leaf.NotAfter, "peer", peerAddr(ctx))
	return &pb.IstioCertificateResponse{CertChain: chainPEM(iss)}, nil
}

// maxValiditySeconds bounds validity_duration so that it converts to a
// time.Duration; longer requests are refused rather than wrapped.
const maxValiditySeconds = int64(100 * 365 * 24 * time.Hour / time.Second)

// chainPEM is the response's cert_chain: the leaf, each intermediate,
// then the bundle as one PEM string.
func chainPEM(iss security.Issued) []string {
	out := make([]string, 0, len(iss.Chain)+1)
	for _, c := range iss.Chain {
		out = append(out, string(security.EncodeCerts(c)))
	}
	return append(out, string(security.EncodeCerts(iss.Bundle...)))
}

// authenticate returns the SPIFFE ID of the token in ctx's metadata.
func (s *Service) authenticate(ctx context.Context) (spiffeid.ID, error) {
	token, err := bearer(ctx)
	if err != nil {
		return spiffeid.ID{}, err
	}
	who, err := s.auth.Authenticate(ctx, token)
	if err != nil {
		return spiffeid.ID{}, err
	}
	id, err := who.ID(s.trustDomain())
	if err != nil {
		return spiffeid.ID{}, fmt.Errorf("%w: %v", security.ErrUnknownToken, err)
	}
	return id, nil
}

// bearer returns the token of the one "authorization: Bearer" header.
func bearer(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return "", security.ErrMissingToken
	}
	if len(vals) > 1 {
		return "", fmt.Errorf("%w: %d authorization headers", security.ErrMalformedToken, len(vals))
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", fmt.Errorf("%w: want \"Bearer <token>\"", security.ErrMalformedToken)
	}
	return token, nil
}

// refuse counts and logs a refusal and returns its gRPC status.
func (s *Service) refuse(ctx context.Context, err error, id spiffeid.ID) error {
	reason, code := classify(err)
	s.refused[reasonIndex[reason]].Add(1)
	attrs := []any{"reason", string(reason), "peer", peerAddr(ctx), "error", err}
	if !id.IsZero() {
		attrs = append(attrs, "identity", id.String())
	}
	s.log.Warn("certificate request refused", attrs...)
	return status.Errorf(code, "meshd CA: %s: %v", reason, err)
}

func peerAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}
