// Package ctl is meshd's operator command line: subcommands of the meshd
// binary that read a running meshd's debug API, as istioctl proxy-status
// reads istiod's, or that translate a folder offline.
//
//	meshd status                     sources, sync and problems
//	meshd proxies                    connected, stale or rejecting proxies, why they closed, per type
//	meshd explain COLLECTION KEY     why an item of a collection is what it is
//	meshd translate --config-dir DIR --node ID
//	                                 the xDS a folder yields for a node, serving nothing
//
// The first three take --addr, the debug server (meshd's --debug-addr);
// every command takes -o text (default, for people) or -o json (for
// scripts: the debug API's own answers, or for translate the resources in
// protojson). Run returns the exit code: 0, 1 when the command failed
// (meshd unreachable, a key not found), 2 for a bad command line.
package ctl
