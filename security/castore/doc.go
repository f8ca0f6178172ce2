// Package castore keeps meshd's CA state in a directory (folder mode):
// security.StateFile, mode 0600, and security.BundleFile, mode 0644, each
// written atomically (a temporary file renamed over the old), so a crash
// never leaves half a key. The first state is created with a hard link,
// which fails if the file exists, so two processes starting at once on
// the same directory end with one root. Updates are meant for one
// process: Update compares revisions, but two processes updating at the
// same instant are not serialized.
package castore
