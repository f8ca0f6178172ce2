// Package pace spaces out pushes of changes that keep coming. A debounce
// (internal/debounce) waits for a quiet moment, so under sustained churn
// every push waits for its cap; a pace sends the first change at once and
// then at most one round per window, however long the changes go on, so a
// change waits at most about one window.
//
// The window widens for two reasons. While changes keep coming, faster
// than a few per window, it grows with the square root of their rate, up
// to [Policy.ChurnWindow]: every round costs each receiver it touches a
// push, and a wider window merges more of them, at a wait that grows
// more slowly than the rate. While the receivers fall behind, a round in
// which a large share of the receivers it woke had not yet taken the
// previous round doubles the window, up to a cap; a round they kept up
// with halves it again, down to the policy's window. A single receiver
// that falls behind waits for its own answer instead ([Policy.Hold]), so
// one slow receiver never slows the others.
//
// [Pacer] is the rule as a pure state machine: it takes the time as an
// argument and does no I/O, so tests step it through any schedule.
// [Timer] applies it with a [time.Timer] for one select loop; it starts no
// goroutine. The loop:
//
//  1. t := pace.NewTimer(pace.Policy{Window: 100 * time.Millisecond,
//     ChurnWindow: 400 * time.Millisecond, MaxWindow: 10 * time.Second})
//  2. On each change: remember what changed, then t.Change().
//  3. In the same select: case <-t.C(): hand the changes on, count them,
//     the receivers woken and those still busy with the last round, then
//     t.Ran(pace.Round{Changes: n, Woken: woken, Behind: behind}).
//
// C is nil while no change waits, so the select never wakes for nothing.
package pace
