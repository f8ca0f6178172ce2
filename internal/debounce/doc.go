// Package debounce batches bursts of events. A batch opens with its first
// event and is due once no event has come for a quiet period, or a maximum
// delay after that first event, whichever comes sooner; the cap is what lets
// a steady trickle of events through, where a quiet period alone would wait
// for it to stop.
//
// [Policy] is the rule, a pure function of the batch's first event and the
// time now. [Timer] applies it with a [time.Timer] for one select loop; it
// starts no goroutine. The loop:
//
//  1. t := debounce.NewTimer(debounce.Policy{Quiet: 100 * time.Millisecond, MaxDelay: time.Second})
//  2. On each event: remember what changed, then t.Add().
//  3. In the same select: case <-t.C(): t.Done(), then act on what changed.
//
// C is nil while no batch is open, so the select never wakes for nothing.
package debounce
