// Package leakcheck checks that tests leave no goroutine running, as
// go.uber.org/goleak does, with time enough for goroutines that are on
// their way out. goleak retries for under half a second; on a busy
// machine (CI runs on two loaded cores) a goroutine whose context has
// just ended can take longer than that to return, and the check would
// fail a test that leaked nothing. leakcheck keeps asking goleak for up
// to Timeout, so only a goroutine still there after it counts as leaked.
//
//	func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
//
//	func TestStop(t *testing.T) {
//		defer leakcheck.VerifyNone(t, goleak.IgnoreCurrent())
//		...
//	}
package leakcheck
