package krt

// Trigger recomputes the transformations that depend on it, for state the
// graph cannot see: a file read outside krt, a clock, a certificate on
// disk, a feature flag. A transformation calls Depend, then reads the
// outside state directly; whoever changes that state calls Fire, and every
// input whose last computation called Depend is recomputed in that
// transaction. Nothing else is: a Fire with no dependents commits nothing.
//
// A Trigger is a node of the graph (kind "trigger" in Describe) and is
// safe for concurrent use. Fire, like a write, must not be called from a
// transformation.
type Trigger struct {
	s *static[tick]
}

// tick is a trigger's one item: the number of times it fired.
type tick struct{ n uint64 }

// NewTrigger returns a trigger of g. Of the options, WithName names it
// (default "trigger") and WithUnsynced holds back the sync of everything
// that depends on it until MarkSynced, for state that loads later.
func NewTrigger(g Owner, opts ...Option) *Trigger {
	opts = append([]Option{WithName("trigger")}, opts...)
	opts = append(opts, WithKey(func(tick) string { return SingletonKey }))
	o := buildOptions(opts)
	s := &static[tick]{unsynced: o.unsynced}
	s.init(g, "trigger", o)
	s.g.construct(s, func(tx *Txn) { s.put(tx, SingletonKey, tick{}) })
	return &Trigger{s: s}
}

// Depend records that the calling transformation's input must be
// recomputed whenever t fires.
func (t *Trigger) Depend(ctx HandlerContext) {
	Fetch[tick](ctx, Static[tick]{t.s})
}

// Fire recomputes every input that depends on t, as one transaction, and
// returns the committed version.
func (t *Trigger) Fire() uint64 {
	return t.s.g.Update(t.FireIn)
}

// FireIn fires t as part of tx, so the recomputation commits together
// with tx's other writes.
func (t *Trigger) FireIn(tx *Txn) {
	Static[tick]{t.s}.In(tx).Modify(SingletonKey, func(old tick, _ bool) (tick, bool) {
		return tick{n: old.n + 1}, true
	})
}

// MarkSynced marks a trigger created WithUnsynced as synced: the outside
// state it stands for has loaded.
func (t *Trigger) MarkSynced() { Static[tick]{t.s}.MarkSynced() }
