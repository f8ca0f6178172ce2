package xds

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Client variants. Some clients reject a newer form of a field that
// others need (gRPC C-core 1.51 rejects a HeaderMatcher's string_match,
// which replaced exact_match and its siblings), so a type may be served
// in variants: a Source made with AsVariant holds, for some names, the
// form a group of clients is sent instead of the base Source's. The
// server tells a stream's variant from its node (WithClientVariants);
// that stream sees the variant's resources where they exist and the base
// resources elsewhere, as one set: subscriptions, versions, resumption
// and removal work as for any stream. Every other stream sees the base
// resources only.

// variantSep separates a type URL from a variant in the cache's keys; a
// type URL holds no space.
const variantSep = " variant="

// variantKey is the cache key of typeURL's variant; typeURL itself for
// the base ("").
func variantKey(typeURL, variant string) string {
	if variant == "" {
		return typeURL
	}
	return typeURL + variantSep + variant
}

// AsVariant makes the Source variant name of its type, and variant more
// too: its resources replace, for the streams of those variants (see
// WithClientVariants), the base Source's resources of the same names.
// Several variants share one form where they differ elsewhere (in
// another type), held once. The base Source must be given to New too.
// No name may be empty.
func AsVariant[T any](name string, more ...string) SourceOption[T] {
	names := append([]string{name}, more...)
	for _, n := range names {
		if n == "" {
			panic("xds: AsVariant with an empty name")
		}
	}
	return func(s *source[T]) { s.variants = names }
}

// WithClientVariants sets the rule that tells a stream's variant from
// the node of its first request: "" for the base resources, or a name
// given to AsVariant. The variant shows in ProxyStatus.Variant. Default:
// every stream gets the base resources.
func WithClientVariants(variantOf func(*core.Node) string) Option {
	return func(o *options) { o.variantOf = variantOf }
}

// resources returns the current resources of typeURL as the stream's
// variant sees them, by name.
func (s *session) resources(v view, typeURL string) map[string]*resource {
	if s.variant != "" {
		if m, ok := v.types[variantKey(typeURL, s.variant)]; ok {
			return m
		}
	}
	return v.resources(typeURL)
}

// setVariant tells the stream's variant, and whether its client warms
// (WithWarmingFor), from its node.
func (s *session) setVariant(node *core.Node) {
	if f := s.proto.variantOf; f != nil {
		s.variant = f(node)
	}
	if f := s.proto.warmingFor; f != nil {
		s.warms = f(node)
	}
}

// applyVariant applies one change of a resource r of variant's own to
// the variant's view, which is the base overlaid by the variant's own
// resources.
func (c *cache) applyVariant(r *resource, variant string, deleted bool) {
	key := variantKey(r.typeURL, variant)
	own, view := c.own[key], c.types[key]
	if own == nil {
		return
	}
	if deleted {
		delete(own, r.name)
		if base := c.types[r.typeURL][r.name]; base != nil {
			view[r.name] = base
		} else {
			delete(view, r.name)
		}
		return
	}
	own[r.name] = r
	view[r.name] = r
}

// rebase applies a change of the base resource name of typeURL to the
// views of the type's variants that have no resource of their own by
// that name.
func (c *cache) rebase(typeURL, name string) {
	base := c.types[typeURL][name]
	for _, variant := range c.variants[typeURL] {
		key := variantKey(typeURL, variant)
		if _, ok := c.own[key][name]; ok {
			continue
		}
		if base != nil {
			c.types[key][name] = base
		} else {
			delete(c.types[key], name)
		}
	}
}
