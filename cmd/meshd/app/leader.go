package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/meshd/meshd/cmd/meshd/internal/debugui"
)

// leaderJitter is client-go's bound on RenewDeadline/RetryPeriod, checked
// by Config.Validate so a bad timing names its flag.
const leaderJitter = leaderelection.JitterFactor

// serviceAccountNamespace is where Kubernetes mounts the pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leadership runs a Lease election among the replicas and, for each term
// this process wins, the work only the leader does. Every replica keeps
// serving xDS whatever the outcome: only writes to the cluster are the
// leader's.
type leadership struct {
	client   kubernetes.Interface
	name, ns string
	identity string
	// The election's timing, as client-go's LeaderElectionConfig has it.
	leaseDuration, renewDeadline, retryPeriod time.Duration
	log                                       *slog.Logger
	leading                                   atomic.Bool
	terms                                     atomic.Uint64
	mu                                        sync.Mutex
	leader                                    string // the identity last seen holding the Lease
	leaderFor                                 time.Time
}

func newLeadership(cfg Config, client kubernetes.Interface, log *slog.Logger) *leadership {
	ns := cfg.LeaseNamespace
	if ns == "" {
		ns = ownNamespace(cfg.InCluster)
	}
	return &leadership{
		client:        client,
		name:          cfg.LeaseName,
		ns:            ns,
		identity:      candidateIdentity(),
		leaseDuration: cfg.LeaseDuration,
		renewDeadline: cfg.RenewDeadline,
		retryPeriod:   cfg.RetryPeriod,
		log:           log.With("lease", ns+"/"+cfg.LeaseName),
	}
}

// ownNamespace is the namespace of meshd's pod: POD_NAMESPACE (set through
// the downward API), else the service account's, else "default".
func ownNamespace(inCluster bool) string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if inCluster {
		if b, err := os.ReadFile(serviceAccountNamespace); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	return "default"
}

// candidateIdentity names this process in the Lease: the host (the pod's
// name in a cluster) and a random suffix, since two processes on one host
// must not both believe they hold it.
func candidateIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "meshd"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "_" + hex.EncodeToString(b[:])
}

// run campaigns until ctx ends. Each term won runs lead with a context
// that ends the moment the term does (the Lease not renewed within the
// renew deadline, or ctx ended); run waits for lead to return before it
// campaigns again, so two terms of this process never overlap. On a clean
// stop the Lease is released, so a successor takes over at once rather
// than after the lease duration.
func (l *leadership) run(ctx context.Context, lead func(ctx context.Context)) error {
	for ctx.Err() == nil {
		if err := l.term(ctx, lead); err != nil {
			return err
		}
	}
	return nil
}

// term campaigns once: it returns when this process lost a term it won,
// or when ctx ends.
func (l *leadership) term(ctx context.Context, lead func(ctx context.Context)) error {
	won := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: l.name, Namespace: l.ns},
			Client:     l.client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: l.identity},
		},
		LeaseDuration:   l.leaseDuration,
		RenewDeadline:   l.renewDeadline,
		RetryPeriod:     l.retryPeriod,
		ReleaseOnCancel: true,
		Name:            l.name,
		Callbacks: leaderelection.LeaderCallbacks{
			// client-go calls this on a goroutine of its own; the work
			// runs on ours below, so that term can wait for it.
			OnStartedLeading: func(termCtx context.Context) { won <- termCtx },
			OnStoppedLeading: func() {},
			OnNewLeader:      l.observe,
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	electCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case termCtx := <-won:
			l.leading.Store(true)
			l.terms.Add(1)
			l.log.Info("leading: this replica writes status", "identity", l.identity)
			var watch sync.WaitGroup
			watch.Go(func() { l.stopWhenTaken(termCtx, le, cancel) })
			lead(termCtx)
			// The term is over; so is this elector, which would otherwise
			// keep renewing a Lease nobody here acts on.
			cancel()
			watch.Wait()
			l.leading.Store(false)
			if ctx.Err() == nil {
				l.log.Warn("lost the lease: stopped writing status", "identity", l.identity)
			}
		case <-electCtx.Done():
		}
	})
	le.Run(electCtx)
	cancel()
	wg.Wait()
	return nil
}

// stopWhenTaken ends the term (stop) as soon as the elector sees another
// holder in the Lease. client-go ends it only once the renew deadline has
// passed, and until then this replica could write over its successor.
func (l *leadership) stopWhenTaken(ctx context.Context, le *leaderelection.LeaderElector, stop func()) {
	tick := time.NewTicker(max(l.retryPeriod/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !le.IsLeader() {
				l.log.Warn("the Lease has another holder: stopped writing status", "holder", le.GetLeader())
				stop()
				return
			}
		}
	}
}

// observe records the Lease's holder as the elector reports it.
func (l *leadership) observe(identity string) {
	l.mu.Lock()
	changed := l.leader != identity
	if changed {
		l.leader, l.leaderFor = identity, time.Now()
	}
	l.mu.Unlock()
	if changed && identity != l.identity {
		l.log.Info("leader elected", "leader", identity)
	}
}

// status is the election as the debug UI's header shows it.
func (l *leadership) status() debugui.Replica {
	l.mu.Lock()
	defer l.mu.Unlock()
	return debugui.Replica{
		Lease:    l.ns + "/" + l.name,
		Identity: l.identity,
		Leading:  l.leading.Load(),
		Leader:   l.leader,
		Since:    l.leaderFor,
		Terms:    l.terms.Load(),
	}
}
