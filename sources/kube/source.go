package kube

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	securityv1 "istio.io/client-go/pkg/apis/security/v1"
	istioclient "istio.io/client-go/pkg/clientset/versioned"
	istioinformers "istio.io/client-go/pkg/informers/externalversions"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/meshd/meshd/krt"
	"github.com/meshd/meshd/sources"
)

// Clients are the API clients a Source uses.
type Clients struct {
	Kube kubernetes.Interface
	// Gateway watches Gateway API routes. Optional: without it, HTTPRoutes
	// and GRPCRoutes stay empty.
	Gateway gatewayclient.Interface
	// Istio watches Istio's security policies. Optional: without it,
	// PeerAuthentications and AuthorizationPolicies stay empty.
	Istio istioclient.Interface
	// Dynamic serves AddDynamic. Optional unless AddDynamic is used.
	Dynamic dynamic.Interface
}

// ClientsForConfig builds every client from one REST config.
func ClientsForConfig(cfg *rest.Config) (Clients, error) {
	var c Clients
	var err error
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	if c.Gateway, err = gatewayclient.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("gateway api client: %w", err)
	}
	if c.Istio, err = istioclient.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("istio client: %w", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return Clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	return c, nil
}

// Source feeds informers into krt collections. Create it with New.
type Source struct {
	g       krt.Owner
	clients Clients
	opts    options
	inputs  sources.Inputs

	mu      sync.Mutex // guards following
	feeds   []runner
	started bool
}

// Option configures a Source.
type Option func(*options)

type options struct {
	logger   *slog.Logger
	name     string
	defaults Watch
	watches  map[string]Watch
	off      map[string]bool // resources WithoutWatch names

	discoveryInterval time.Duration
	// cluster is WithCluster's name; "" for the local cluster.
	cluster string
}

// WithLogger sets the logger watch errors and skipped resources are
// reported to. Default: discard.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithName sets the prefix of the collections' names. Default: "kube".
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithDiscoveryInterval sets how often Run asks the API server again for a
// resource it did not serve at start, such as a Gateway API route whose
// CRD is installed after meshd. Default: 10s.
func WithDiscoveryInterval(d time.Duration) Option {
	return func(o *options) { o.discoveryInterval = d }
}

// WithCluster names the cluster the source watches, for a source of one
// of several clusters: every object is annotated with
// sources.AnnotationCluster before it is cached, and the kinds whose names
// repeat across clusters (Pods, EndpointSlices, Nodes) are keyed by
// sources.ClusterKey. Services and Namespaces keep "namespace/name", so
// the same Service in several clusters is one Service (namespace
// sameness). Default: "", the local cluster, nothing annotated.
func WithCluster(name string) Option { return func(o *options) { o.cluster = name } }

// WithDefaultWatch sets the Watch of every built-in collection that has no
// WithWatch of its own. Default: the zero Watch (everything).
func WithDefaultWatch(w Watch) Option { return func(o *options) { o.defaults = w } }

// WithWatch sets the Watch of one built-in collection, named by its
// resource: "services", "pods", "namespaces", "endpointslices", "nodes",
// "configmaps", "httproutes", "grpcroutes", "peerauthentications" or
// "authorizationpolicies".
func WithWatch(resource string, w Watch) Option {
	return func(o *options) { o.watches[resource] = w }
}

// WithoutWatch leaves the built-in collection of resource (named as for
// WithWatch) empty and synced, with no informer: for a kind the program
// does not read, which its RBAC role then need not grant.
func WithoutWatch(resource string) Option {
	return func(o *options) { o.off[resource] = true }
}

// New returns a source with a collection for each Kubernetes kind of
// sources.Inputs; their MeshConfig is empty. It builds the informers but
// starts nothing; Run does. g is the graph, or a sub-graph of it that
// stops the collections with the cluster (krt.SubGraph).
func New(g krt.Owner, clients Clients, opts ...Option) *Source {
	o := options{logger: slog.New(slog.DiscardHandler), name: "kube", watches: map[string]Watch{}, off: map[string]bool{},
		discoveryInterval: 10 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Source{g: g, clients: clients, opts: o}
	s.inputs = sources.Inputs{
		Services:              core[*corev1.Service](s, corev1.SchemeGroupVersion.WithResource("services")),
		Pods:                  core[*sources.PodInfo](s, corev1.SchemeGroupVersion.WithResource("pods")),
		Namespaces:            core[*corev1.Namespace](s, corev1.SchemeGroupVersion.WithResource("namespaces")),
		EndpointSlices:        core[*discoveryv1.EndpointSlice](s, discoveryv1.SchemeGroupVersion.WithResource("endpointslices")),
		Nodes:                 core[*corev1.Node](s, corev1.SchemeGroupVersion.WithResource("nodes")),
		ConfigMaps:            core[*corev1.ConfigMap](s, corev1.SchemeGroupVersion.WithResource("configmaps")),
		HTTPRoutes:            gateway[*gatewayv1.HTTPRoute](s, gatewayVersion.WithResource("httproutes")),
		GRPCRoutes:            gateway[*gatewayv1.GRPCRoute](s, gatewayVersion.WithResource("grpcroutes")),
		PeerAuthentications:   istio[*securityv1.PeerAuthentication](s, securityv1.SchemeGroupVersion.WithResource("peerauthentications")),
		AuthorizationPolicies: istio[*securityv1.AuthorizationPolicy](s, securityv1.SchemeGroupVersion.WithResource("authorizationpolicies")),
	}.Complete(g, o.name) // the mesh config, which the source does not read
	return s
}

// watchFor returns the Watch of a built-in resource, annotating each
// object with its cluster under WithCluster. A Pod is turned into its
// sources.PodInfo last, once the Watch's own transform and the annotation
// have seen the full Pod, so that the informer caches only the PodInfo.
func (s *Source) watchFor(resource string) Watch {
	w, ok := s.opts.watches[resource]
	if !ok {
		w = s.opts.defaults
	}
	if s.opts.cluster != "" {
		w.Transform = annotateCluster(w.transform(), s.opts.cluster)
	}
	if resource == "pods" {
		w.Transform = then(w.transform(), sources.PodInfoTransform)
	}
	return w
}

// then returns the transform that runs first and then next.
func then(first, next cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		obj, err := first(obj)
		if err != nil {
			return nil, err
		}
		return next(obj)
	}
}

// perCluster are the resources whose names repeat across clusters, keyed
// by sources.ClusterKey under WithCluster.
var perCluster = map[string]bool{"pods": true, "endpointslices": true, "nodes": true}

// keyFor returns how the collection of resource keys its items.
func keyFor[T sources.Object](s *Source, resource string) func(T) string {
	if s.opts.cluster != "" && perCluster[resource] {
		return sources.ClusterKey[T]
	}
	return sources.Key[T]
}

// core makes the collection of a core kind, with an informer factory of its
// own so its Watch applies to it alone.
func core[T sources.Object](s *Source, gvr schema.GroupVersionResource) krt.Collection[T] {
	return feedOf[T](s, gvr, false, true, func(w Watch) informers.SharedInformerFactory {
		return informers.NewSharedInformerFactoryWithOptions(s.clients.Kube, 0,
			informers.WithNamespace(w.Namespace), informers.WithTweakListOptions(w.tweak), informers.WithTransform(w.transform()))
	})
}

// gateway makes the collection of a Gateway API kind; it stays empty when
// there is no Gateway client, and while the CRD is not installed.
func gateway[T sources.Object](s *Source, gvr schema.GroupVersionResource) krt.Collection[T] {
	return feedOf[T](s, gvr, true, s.clients.Gateway != nil, func(w Watch) gatewayinformers.SharedInformerFactory {
		return gatewayinformers.NewSharedInformerFactoryWithOptions(s.clients.Gateway, 0,
			gatewayinformers.WithNamespace(w.Namespace), gatewayinformers.WithTweakListOptions(w.tweak),
			gatewayinformers.WithTransform(w.transform()))
	})
}

// istio makes the collection of an Istio kind; it stays empty when there
// is no Istio client, and while the CRD is not installed.
func istio[T sources.Object](s *Source, gvr schema.GroupVersionResource) krt.Collection[T] {
	return feedOf[T](s, gvr, true, s.clients.Istio != nil, func(w Watch) istioinformers.SharedInformerFactory {
		return istioinformers.NewSharedInformerFactoryWithOptions(s.clients.Istio, 0,
			istioinformers.WithNamespace(w.Namespace), istioinformers.WithTweakListOptions(w.tweak),
			istioinformers.WithTransform(w.transform()))
	})
}

// informerFactory is what feedOf needs of a generated informer factory
// (client-go's, the Gateway API's, Istio's): the shared informer of a
// resource, and the factory's lifetime.
type informerFactory[G interface {
	Informer() cache.SharedIndexInformer
}] interface {
	ForResource(schema.GroupVersionResource) (G, error)
	Start(stop <-chan struct{})
	Shutdown()
}

// feedOf makes the collection of gvr from the informer of the factory
// newFactory makes for the resource's Watch; without a client (present
// false) or with the resource turned off, the collection stays empty.
// discovered says whether Run looks the resource up first. It panics when
// the factory does not know gvr: the callers name its kinds.
func feedOf[T sources.Object, F informerFactory[G], G interface {
	Informer() cache.SharedIndexInformer
}](
	s *Source, gvr schema.GroupVersionResource, discovered, present bool, newFactory func(Watch) F) krt.Collection[T] {
	name := s.opts.name + "/" + gvr.Resource
	if !present || s.opts.off[gvr.Resource] {
		return krt.NewStatic[T](s.g, sources.CollectionOptions[T](name)...)
	}
	factory := newFactory(s.watchFor(gvr.Resource))
	informer, err := factory.ForResource(gvr)
	if err != nil {
		panic(fmt.Sprintf("kube: %s: %v", name, err))
	}
	return newFeed[T](s, name, gvr, discovered, informer.Informer(), factory.Start, factory.Shutdown).static
}

// add registers a feed for Run.
func (s *Source) add(r runner) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("kube: collection added after Run")
	}
	s.feeds = append(s.feeds, r)
}

// Inputs returns the built-in collections.
func (s *Source) Inputs() sources.Inputs { return s.inputs }

// Stats returns each informer's counters, in the order the collections were
// made.
func (s *Source) Stats() []CollectionStats {
	s.mu.Lock()
	feeds := append([]runner(nil), s.feeds...)
	s.mu.Unlock()
	out := make([]CollectionStats, len(feeds))
	for i, f := range feeds {
		out[i] = f.stats()
	}
	return out
}

// Run starts the informers, loads each collection's initial listing and
// keeps the collections up to date until ctx ends. Resources that may be
// absent (Gateway API routes, Istio policies, AddDynamic) are looked up
// first; one that the server does not serve is reported with a warning and
// its collection is empty and synced, until the resource is served (its
// CRD installed later): discovery is asked again every
// WithDiscoveryInterval, and then its informer starts. Run returns nil
// once every informer has stopped. It may be called once.
func (s *Source) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return fmt.Errorf("kube: Run called twice")
	}
	s.started = true
	feeds := s.feeds
	s.mu.Unlock()

	stop := make(chan struct{})
	running := &runningFeeds{stop: stop}
	var absent []runner
	for _, f := range feeds {
		if f.discovered() && !s.served(f.gvr()) {
			s.opts.logger.Warn("resource not served (CRD not installed?); its collection stays empty until it is",
				"resource", f.gvr().String(), "recheck", s.opts.discoveryInterval)
			f.skip()
			absent = append(absent, f)
			continue
		}
		running.start(f)
	}
	var late sync.WaitGroup
	if len(absent) > 0 {
		late.Go(func() { s.startWhenServed(ctx, absent, running) })
	}
	<-ctx.Done()
	late.Wait()
	// Informers stop when stop closes; Shutdown waits for them.
	close(stop)
	running.shutdown()
	return nil
}

// startWhenServed asks discovery, every discoveryInterval until ctx ends,
// whether the absent resources are served now, and starts each that is.
func (s *Source) startWhenServed(ctx context.Context, absent []runner, running *runningFeeds) {
	tick := time.NewTicker(s.opts.discoveryInterval)
	defer tick.Stop()
	for len(absent) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		absent = slices.DeleteFunc(absent, func(f runner) bool {
			if !s.served(f.gvr()) {
				return false
			}
			s.opts.logger.Info("resource served now; watching it", "resource", f.gvr().String())
			f.unskip()
			running.start(f)
			return true
		})
	}
}

// runningFeeds are the feeds whose informers run, started at Run or later.
type runningFeeds struct {
	stop  <-chan struct{}
	mu    sync.Mutex // guards feeds
	feeds []runner
	wg    sync.WaitGroup // the feeds' initial flushes
}

func (r *runningFeeds) start(f runner) {
	f.start(r.stop)
	r.mu.Lock()
	r.feeds = append(r.feeds, f)
	r.mu.Unlock()
	r.wg.Go(func() { f.waitAndFlush(r.stop) })
}

// shutdown stops every informer once stop is closed, and waits for them.
func (r *runningFeeds) shutdown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.feeds {
		f.shutdown()
	}
	r.wg.Wait()
}

// served reports whether the API server serves gvr. When discovery fails
// for another reason than the group version being absent, the resource is
// assumed served: its informer retries and reports errors on its own.
func (s *Source) served(gvr schema.GroupVersionResource) bool {
	list, err := s.clients.Kube.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false
		}
		s.opts.logger.Warn("discovery failed; watching anyway", "resource", gvr.String(), "err", err)
		return true
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource })
}

// gatewayVersion is the Gateway API's group and version as a
// schema.GroupVersion: the package's own GroupVersion is a metav1 one,
// without WithResource.
var gatewayVersion = schema.GroupVersion(gatewayv1.GroupVersion)
