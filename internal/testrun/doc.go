// Package testrun is how meshd's tests run a component in the background
// and watch what it does: Go runs a Run(ctx) error method until the test
// ends and fails the test if it returned an error; Poll waits for a
// condition; Buffer collects what the component writes, for the test to
// read while it runs. Tests of several packages (the sources, the meshd
// binary, the screenshot) start and stop their components this one way.
package testrun
