// Package headless drives a headless Chromium through chromedp, for the
// tests that check the debug UI in a real browser: the debug UI's own
// browser test and the one that renders the README's screenshot from the
// demo. It fails the test it is given rather than returning errors, as
// net/http/httptest does.
//
//	exe := headless.NeedChromium(t) // skips t without one, or in -short mode
//	b := headless.Start(t, exe)
//	b.Run(chromedp.Navigate(url))
//	b.WaitJS("the graph", `document.querySelectorAll('#nodes g.node').length > 0`)
//	n := headless.Eval[int](b, `document.querySelectorAll('#nodes g.node').length`)
//
// The browser runs with no sandbox and no network beyond what the page
// asks for; it ends with the test. Uncaught exceptions, console errors and
// Content-Security-Policy violations of the page are collected for
// PageErrors.
package headless
