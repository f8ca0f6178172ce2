package krt

import "slices"

// Status is what a transformation reported about one input of a status
// collection (see NewStatusCollection), filed under the input's key: a
// route's "Accepted" condition, a gateway's attached listeners.
type Status[S any] struct {
	Key    string // the input's key
	Status S
}

// ResourceName returns the input's key.
func (s Status[S]) ResourceName() string { return s.Key }

// NewStatusCollection derives two collections from in with one
// transformation that returns, for each input, an output (nil: none) and
// a status about the input (nil: none). The statuses are filed under the
// input's key; the outputs are keyed like any item, and opts configure
// them as for NewCollection. Both commit in the same transaction, so a
// reader inside Graph.Read never sees an output without its status.
//
// The statuses' collection is named after the outputs' with "/status"
// appended, and an internal collection between in and the two with
// "/computed". A failed computation (HandlerContext.Fail, a panic) keeps
// the input's last good output and status.
func NewStatusCollection[I, S, O any](g Owner, in Collection[I], transform func(ctx HandlerContext, in I) (*S, *O), opts ...Option) (Collection[Status[S]], Collection[O]) {
	return newStatus(g, in, func(ctx HandlerContext, v I) (*S, []O) {
		st, out := transform(ctx, v)
		if out == nil {
			return st, nil
		}
		return st, []O{*out}
	}, opts)
}

// NewStatusManyCollection is NewStatusCollection for a transformation of
// each input into zero or more outputs and one status.
func NewStatusManyCollection[I, S, O any](g Owner, in Collection[I], transform func(ctx HandlerContext, in I) (*S, []O), opts ...Option) (Collection[Status[S]], Collection[O]) {
	return newStatus(g, in, transform, opts)
}

// computed is one input's status and outputs, as one item, so both change
// in the one recomputation.
type computed[S, O any] struct {
	key    string
	status *S
	outs   []O
}

func newStatus[I, S, O any](g Owner, in Collection[I], transform func(HandlerContext, I) (*S, []O), opts []Option) (Collection[Status[S]], Collection[O]) {
	o := buildOptions(opts)
	name := o.name
	if name == "" {
		name = typeName[O]() + "/many"
		opts = append(opts, WithName(name))
	}
	eqOut := resolveAccessors[O](o, name).equal
	eqStatus := equalFor[S]()
	same := func(a, b computed[S, O]) bool {
		return a.key == b.key && (a.status == nil) == (b.status == nil) &&
			(a.status == nil || eqStatus(*a.status, *b.status)) && slices.EqualFunc(a.outs, b.outs, eqOut)
	}
	pairs := NewCollection(g, in, func(ctx HandlerContext, v I) *computed[S, O] {
		st, outs := transform(ctx, v)
		if st == nil && len(outs) == 0 {
			return nil
		}
		return &computed[S, O]{key: ctx.Key(), status: st, outs: outs}
	}, WithName(name+"/computed"), WithKey(func(c computed[S, O]) string { return c.key }), WithEquals(same))
	statuses := NewCollection(g, pairs, func(_ HandlerContext, c computed[S, O]) *Status[S] {
		if c.status == nil {
			return nil
		}
		return &Status[S]{Key: c.key, Status: *c.status}
	}, WithName(name+"/status"), WithEquals(func(a, b Status[S]) bool { return a.Key == b.Key && eqStatus(a.Status, b.Status) }))
	outputs := NewManyCollection(g, pairs, func(_ HandlerContext, c computed[S, O]) []O { return c.outs }, opts...)
	return statuses, outputs
}
